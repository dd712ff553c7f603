// Finds out whether a sound player really plays, for `toastkit doctor`: a moment of silence played as a toast's
// sound would be, so a player counts only once it reached the sound card or the sound server.
import Glibc

extension SoundPlayer {
    /// The samples of the silence: a tenth of a second at 8 kHz.
    static let silentSamples: UInt32 = 800

    /// Plays a moment of silence (a WAV file) as a toast's sound would be played in `environment`, each player tried
    /// given at most `limit`: the name of the one that played it (a program that exists but cannot reach the sound
    /// server does not count), or nil and each one's reason (none: nothing to try).
    package func probe(appName: String, environment: [String: String], limit: Duration)
        -> (player: String?, failures: [String])
    {
        let folder = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var random = SystemRandomNumberGenerator()
        let path = "\(folder)/toastkit-silence-\(String(random.next() as UInt64, radix: 16)).wav"
        // Created new, private, never through a link; close-on-exec, so no program started meanwhile holds it.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            return (nil, ["no file for the silence at \(path): \(Errno(errno))"])
        }
        defer { unlink(path) }
        let bytes = Self.silentWave()
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
        close(descriptor)
        guard written == bytes.count else { return (nil, ["cannot write the silence to \(path)"]) }
        return playFile(path, appName: appName, environment: environment, limit: limit)
    }

    /// ``silentSamples`` as a WAV file: 16-bit mono PCM at 8 kHz, every sample 0.
    static func silentWave() -> [UInt8] {
        let rate: UInt32 = 8000
        let data = silentSamples * 2
        func little(_ value: UInt32, _ size: Int) -> [UInt8] {
            (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        var header = Array("RIFF".utf8) + little(36 + data, 4) + Array("WAVEfmt ".utf8)
        // The format: PCM (1), one channel, the rate, bytes a second, bytes a frame, bits a sample.
        header += little(16, 4) + little(1, 2) + little(1, 2) + little(rate, 4) + little(rate * 2, 4)
        header += little(2, 2) + little(16, 2) + Array("data".utf8) + little(data, 4)
        return header + [UInt8](repeating: 0, count: Int(data))
    }
}
