// swift-tools-version: 6.0
import PackageDescription

// Layers (dependencies point down only):
//   toastkit (CLI) → ToastKitAgent → ToastKit → FreedesktopNotifications → ToastModel
//                                                        └→ DBus → CDBus (libdbus-1)
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "ToastKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ToastKit", targets: ["ToastKit"]),
        .library(name: "ToastKitTesting", targets: ["ToastKitTesting"]),
        .library(name: "DBus", targets: ["DBus"]),
        .executable(name: "toastkit", targets: ["ToastKitCLI"]),
        .executable(name: "dbus-benchmark", targets: ["DBusBenchmark"]),
        .executable(name: "toastkit-benchmark", targets: ["ToastKitBenchmark"]),
    ],
    targets: [
        .systemLibrary(
            name: "CDBus",
            path: "Modules/CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        // glibc's posix_spawn_file_actions_addchdir_np, which the Glibc module does not declare.
        .systemLibrary(name: "CSpawn", path: "Modules/CSpawn"),
        .target(name: "DBus", dependencies: ["CDBus"], swiftSettings: strict),
        .target(name: "ToastModel", swiftSettings: strict),
        .target(name: "ToastKitTesting", dependencies: ["ToastModel"], swiftSettings: strict),
        .target(
            name: "FreedesktopNotifications", dependencies: ["DBus", "ToastModel", "CSpawn"], swiftSettings: strict),
        .target(name: "ToastKit", dependencies: ["ToastModel", "FreedesktopNotifications"], swiftSettings: strict),
        // The agent's rules and the parts of its service that are not the command line's: the machine, the lanes,
        // the journal's writer, the runner of action commands.
        .target(
            name: "ToastKitAgent", dependencies: ["ToastKit", "ToastModel", "FreedesktopNotifications", "CSpawn"],
            swiftSettings: strict),
        .target(
            name: "ToastKitCommandLine",
            dependencies: ["ToastKit", "ToastKitAgent", "FreedesktopNotifications", "DBus"],
            swiftSettings: strict),
        .executableTarget(name: "ToastKitCLI", dependencies: ["ToastKitCommandLine"], swiftSettings: strict),
        // The getting-started guide's programs, run by the tests as processes of their own (not a product).
        .executableTarget(name: "GuideExamples", dependencies: ["ToastKit"], swiftSettings: strict),
        .target(name: "BenchmarkSupport", swiftSettings: strict),
        .executableTarget(name: "DBusBenchmark", dependencies: ["DBus", "BenchmarkSupport"], swiftSettings: strict),
        .executableTarget(
            name: "ToastKitBenchmark", dependencies: ["ToastKit", "ToastKitAgent", "DBus", "BenchmarkSupport"],
            swiftSettings: strict),
        .target(
            name: "TestSupport", dependencies: ["DBus", "FreedesktopNotifications", "CSpawn"],
            path: "Tests/TestSupport",
            swiftSettings: strict),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "FreedesktopNotificationsTests",
            dependencies: ["FreedesktopNotifications", "ToastModel", "ToastKitTesting", "TestSupport", "DBus"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ToastKitCommandLineTests",
            dependencies: ["ToastKitCommandLine", "ToastKitAgent", "TestSupport", "DBus"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ConformanceTests",
            dependencies: ["FreedesktopNotifications", "ToastModel", "ToastKitTesting", "TestSupport", "DBus"],
            swiftSettings: strict
        ),
        .testTarget(name: "ToastKitTests", dependencies: ["ToastKit", "ToastKitTesting"], swiftSettings: strict),
        .testTarget(
            name: "ToastKitAgentTests",
            dependencies: [
                "ToastKitAgent", "ToastKitTesting", "ToastModel", "FreedesktopNotifications", "CSpawn", "TestSupport",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "ToastModelTests",
            dependencies: ["ToastModel", "ToastKitTesting"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
