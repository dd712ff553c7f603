// libcanberra, loaded at run time: the desktop's sound system, as SoundPlayer tries it first for a toast's sound.
import CSpawn
import Dispatch
import Glibc
import Synchronization

/// libcanberra, loaded at run time (no build dependency; absent on a system without it, and never loaded into a
/// statically linked program): one context for the process, a sound played with `media.filename`, `media.role` `event`
/// and `application.name`.
///
/// `@unchecked Sendable`: the context is used only through libcanberra's calls, which lock it themselves.
final class Canberra: @unchecked Sendable {
    typealias Create = @convention(c) (UnsafeMutablePointer<OpaquePointer?>) -> Int32
    typealias ProplistCreate = @convention(c) (UnsafeMutablePointer<OpaquePointer?>) -> Int32
    typealias ProplistSets = @convention(c) (OpaquePointer?, UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32
    typealias ProplistDestroy = @convention(c) (OpaquePointer?) -> Int32
    typealias Finished = @convention(c) (OpaquePointer?, UInt32, Int32, UnsafeMutableRawPointer?) -> Void
    typealias PlayFull =
        @convention(c) (OpaquePointer?, UInt32, OpaquePointer?, Finished?, UnsafeMutableRawPointer?)
        -> Int32
    typealias StringError = @convention(c) (Int32) -> UnsafePointer<CChar>?
    typealias Playing = @convention(c) (OpaquePointer?, UInt32, UnsafeMutablePointer<Int32>) -> Int32
    typealias Cancel = @convention(c) (OpaquePointer?, UInt32) -> Int32

    /// The process's libcanberra, or nil where it cannot be loaded, gives no context, or the program is statically
    /// linked (it has no dynamic loader: `AT_BASE` is 0), where a loaded library would bring a second C library.
    static let shared: Canberra? = getauxval(7 /* AT_BASE */) == 0 ? nil : Canberra()

    /// One sound's end, as libcanberra's callback tells it.
    private final class Finish: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        /// Written by the callback before `done` is signalled, read after.
        var error: Int32 = 0
    }

    private let context: OpaquePointer
    private let proplistCreate: ProplistCreate
    private let proplistSets: ProplistSets
    private let proplistDestroy: ProplistDestroy
    private let playFull: PlayFull
    private let describe: StringError?
    private let isPlaying: Playing?
    private let cancel: Cancel?
    /// The id of the last sound played (each has its own, so it can be asked after and cancelled).
    private let lastID = Atomic<UInt32>(0)

    private init?() {
        guard let library = dlopen("libcanberra.so.0", RTLD_NOW | RTLD_LOCAL) else { return nil }
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            dlsym(library, name).map { unsafeBitCast($0, to: type) }
        }
        guard let create = symbol("ca_context_create", as: Create.self),
            let proplistCreate = symbol("ca_proplist_create", as: ProplistCreate.self),
            let proplistSets = symbol("ca_proplist_sets", as: ProplistSets.self),
            let proplistDestroy = symbol("ca_proplist_destroy", as: ProplistDestroy.self),
            let playFull = symbol("ca_context_play_full", as: PlayFull.self)
        else { return nil }
        var context: OpaquePointer?
        guard create(&context) == 0, let context else { return nil }
        self.context = context
        self.proplistCreate = proplistCreate
        self.proplistSets = proplistSets
        self.proplistDestroy = proplistDestroy
        self.playFull = playFull
        describe = symbol("ca_strerror", as: StringError.self)
        isPlaying = symbol("ca_context_playing", as: Playing.self)
        cancel = symbol("ca_context_cancel", as: Cancel.self)
    }

    /// Plays `file` and returns once it has played (at most `limit`): nil, or libcanberra's reason.
    func play(file: String, appName: String, limit: Duration) -> String? {
        var properties: OpaquePointer?
        guard proplistCreate(&properties) == 0, let properties else { return "no memory" }
        defer { _ = proplistDestroy(properties) }
        for (key, value) in [("media.filename", file), ("media.role", "event"), ("application.name", appName)] {
            _ = proplistSets(properties, key, value)
        }
        let finish = Finish()
        // Released by the callback, the only one that does: a callback that never comes leaks this one box.
        let box = Unmanaged.passRetained(finish)
        let id = lastID.wrappingAdd(1, ordering: .relaxed).newValue
        let started = playFull(
            context, id, properties,
            { _, _, error, box in
                guard let box else { return }
                let finish = Unmanaged<Finish>.fromOpaque(box).takeRetainedValue()
                finish.error = error
                finish.done.signal()
            }, box.toOpaque())
        guard started == 0 else {
            box.release()
            return reason(started)
        }
        let deadline = ContinuousClock.now + limit
        while finish.done.wait(timeout: .now() + .seconds(1)) != .success {
            // libcanberra's PulseAudio driver never calls back for a stream that ended while it was being started:
            // asked each second whether the sound still plays.
            var playing: Int32 = 1
            if let isPlaying, isPlaying(context, id, &playing) == 0, playing == 0 { return nil }
            if ContinuousClock.now >= deadline {
                _ = cancel?(context, id)
                return "the sound did not end within \(limit)"
            }
        }
        return finish.error == 0 ? nil : reason(finish.error)
    }

    private func reason(_ code: Int32) -> String {
        describe?(code).map { String(cString: $0).lowercased() } ?? "error \(code)"
    }
}
