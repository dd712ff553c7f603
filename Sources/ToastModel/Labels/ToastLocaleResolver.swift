#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Chooses the language of the built-in labels from the environment, with gettext's precedence.
///
/// 1. The effective message locale is the first non-empty of `LC_ALL`, `LC_MESSAGES`, `LANG`; none means `"C"`.
/// 2. If that locale is `"C"` or `"POSIX"` (also `C.UTF-8` and similar), the labels are English and `LANGUAGE`
///    is ignored — as gettext does, because such a locale asks for untranslated output.
/// 3. Otherwise, if `LANGUAGE` is non-empty, it is a colon-separated list tried in order; the first entry with
///    labels wins. As in gettext, when no entry has labels the result is English (the effective locale is
///    *not* consulted again).
/// 4. Otherwise the effective locale decides.
///
/// Locale names are `language[_territory][.codeset][@modifier]`; Chinese is split by script: `zh_TW`, `zh_HK`,
/// `zh_MO` and `zh_Hant` are traditional, other Chinese names (`zh_CN`, `zh_SG`, `zh`) simplified.
public enum ToastLocaleResolver {
    /// The language for `environment`. Pass a dictionary in tests so the process environment is never mutated.
    public static func language(environment: [String: String]) -> ToastLanguage {
        language { environment[$0] }
    }

    /// The language for the process environment: the four variables are read one by one (`getenv`), not the whole
    /// environment — this runs in every `toastkit send`.
    public static func language() -> ToastLanguage {
        language { name in getenv(name).map { String(cString: $0) } }
    }

    private static func language(_ lookup: (String) -> String?) -> ToastLanguage {
        func value(_ name: String) -> String? {
            guard let value = lookup(name), !value.isEmpty else { return nil }
            return value
        }
        let locale = value("LC_ALL") ?? value("LC_MESSAGES") ?? value("LANG") ?? "C"
        if isUntranslatedLocale(locale) { return .english }
        if let list = value("LANGUAGE") {
            for entry in list.split(separator: ":") {
                if let language = language(forLocaleName: String(entry)) { return language }
            }
            return .english
        }
        return language(forLocaleName: locale) ?? .english
    }

    /// The language for one locale name such as `ja_JP.UTF-8`, `zh_TW` or `es`; `nil` when ToastKit has no
    /// labels for it.
    public static func language(forLocaleName name: String) -> ToastLanguage? {
        var base = Substring(name)
        if let at = base.firstIndex(of: "@") { base = base[..<at] }
        if let dot = base.firstIndex(of: ".") { base = base[..<dot] }
        let parts = base.split(whereSeparator: { $0 == "_" || $0 == "-" }).map { $0.lowercased() }
        guard let code = parts.first else { return nil }
        switch code {
        case "en": return .english
        case "es": return .spanish
        case "ja": return .japanese
        case "zh":
            let rest = Set(parts.dropFirst())
            if !rest.isDisjoint(with: ["hant", "tw", "hk", "mo"]) { return .traditionalChinese }
            return .simplifiedChinese
        default: return nil
        }
    }

    static func isUntranslatedLocale(_ name: String) -> Bool {
        name == "C" || name == "POSIX" || name.hasPrefix("C.") || name.hasPrefix("C@")
    }
}
