import Glibc

/// `send --at TIME`: a time of day or a date and time, in the local time zone (`TZ`), as seconds since 1970.
///
/// - `17:00`, `17:00:30`: today, or tomorrow when that time has passed today;
/// - `2026-12-24 09:00`, `2026-12-24T09:00:30`: that day;
/// - either with `Z` or an offset (`+01:00`, `-0500`) at the end: in that zone, not the local one.
enum TimeText {

    /// The time `text` says, after `now` (seconds since 1970); nil when it is not a time.
    static func seconds(_ text: String, now: Double) -> Double? {
        var rest = Substring(text)
        var offset: Int?
        if rest.hasSuffix("Z") {
            offset = 0
            rest = rest.dropLast()
        } else if let sign = rest.lastIndex(where: { $0 == "+" || $0 == "-" }),
            rest.distance(from: sign, to: rest.endIndex) >= 5,
            rest[rest.startIndex..<sign].contains(":")
        {
            let zone = rest[rest.index(after: sign)...].filter { $0 != ":" }
            guard zone.count == 4, let hours = Int(zone.prefix(2)), let minutes = Int(zone.suffix(2)), hours < 24,
                minutes < 60
            else { return nil }
            offset = (rest[sign] == "-" ? -1 : 1) * (hours * 3600 + minutes * 60)
            rest = rest[..<sign]
        }
        let parts = rest.split(whereSeparator: { $0 == " " || $0 == "T" })
        guard parts.count == 1 || parts.count == 2, let clock = parts.last.flatMap(timeOfDay) else { return nil }
        var date: (year: Int, month: Int, day: Int)?
        if parts.count == 2 {
            let fields = parts[0].split(separator: "-").map { Int($0) }
            guard fields.count == 3, let year = fields[0], let month = fields[1], let day = fields[2],
                (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day)
            else { return nil }
            date = (year, month, day)
        }
        func at(dayOffset: Int) -> Double? {
            var time = time_t(now)
            var today = tm()
            if let offset {
                time += time_t(offset)
                gmtime_r(&time, &today)
            } else {
                localtime_r(&time, &today)
            }
            var wanted = tm()
            wanted.tm_year = Int32((date?.year ?? Int(today.tm_year) + 1900) - 1900)
            wanted.tm_mon = Int32((date?.month ?? Int(today.tm_mon) + 1) - 1)
            wanted.tm_mday = Int32((date?.day ?? Int(today.tm_mday)) + dayOffset)
            wanted.tm_hour = Int32(clock.hour)
            wanted.tm_min = Int32(clock.minute)
            wanted.tm_sec = Int32(clock.second)
            wanted.tm_isdst = -1
            if let offset {
                let seconds = timegm(&wanted)
                return seconds == -1 ? nil : Double(seconds - time_t(offset))
            }
            let seconds = mktime(&wanted)
            guard seconds != -1 else { return nil }
            // A day of the month past its end (the 31st of a 30-day month) is not a date.
            if let date, wanted.tm_mday != Int32(date.day) { return nil }
            return Double(seconds)
        }
        guard let first = at(dayOffset: 0) else { return nil }
        if date == nil, first <= now { return at(dayOffset: 1) }
        return first
    }

    private static func timeOfDay(_ text: Substring) -> (hour: Int, minute: Int, second: Int)? {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard fields.count == 2 || fields.count == 3, let hour = fields[0], let minute = fields[1],
            (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        let second = fields.count == 3 ? fields[2] : 0
        guard let second, (0...59).contains(second) else { return nil }
        return (hour, minute, second)
    }
}
