/// A label that ToastKit itself shows (M7). App text — titles, messages, custom action titles — is the app's
/// business and is never translated by ToastKit.
public enum ToastLabel: String, Sendable, Hashable, Codable, CaseIterable {
    /// The built-in ``ToastAction/later`` action.
    case later
    /// The default label of an action that opens the toast's subject (the CLI's `--tap ID` without a label).
    case open
    /// The built-in ``ToastAction/dismiss`` action.
    case dismiss
    /// The action of `toastkit run`'s toast that opens the command's whole output.
    case output
}

/// A language ToastKit has built-in labels for.
public enum ToastLanguage: String, Sendable, Hashable, Codable, CaseIterable {
    /// English, also the fallback for every other language and for the "C"/"POSIX" locale.
    case english = "en"
    /// Spanish.
    case spanish = "es"
    /// Japanese.
    case japanese = "ja"
    /// Chinese in simplified script (mainland China, Singapore).
    case simplifiedChinese = "zh-Hans"
    /// Chinese in traditional script (Taiwan, Hong Kong, Macau).
    case traditionalChinese = "zh-Hant"
}

/// The built-in labels in one language.
///
/// The labels are a table in code rather than `.lproj` resources: Foundation's bundle localization on Linux
/// follows its own language preference, not gettext's `LANGUAGE`/`LC_ALL`/`LC_MESSAGES`/`LANG` precedence,
/// and a table is deterministic in tests.
public struct ToastLabels: Sendable, Hashable {
    /// The language of the labels.
    public var language: ToastLanguage

    /// Creates the labels of `language`.
    public init(language: ToastLanguage) {
        self.language = language
    }

    /// The labels of the language a code or locale name names (`"es"`, `"es-MX"`, `"ja_JP.UTF-8"`, `"zh-Hant"`), for
    /// an app that knows which language its toasts are in: `ToastLabels(languageCode: "es") ?? .current`. `nil`
    /// when ToastKit has no labels in that language.
    public init?(languageCode: String) {
        guard let language = ToastLocaleResolver.language(forLocaleName: languageCode) else { return nil }
        self.init(language: language)
    }

    /// The labels for the process's locale environment, chosen as gettext does.
    public static var current: ToastLabels {
        ToastLabels(language: ToastLocaleResolver.language())
    }

    /// The labels for an explicit environment (see ``ToastLocaleResolver/language(environment:)``).
    public static func resolved(environment: [String: String]) -> ToastLabels {
        ToastLabels(language: ToastLocaleResolver.language(environment: environment))
    }

    /// The text of `label` in this language.
    public subscript(_ label: ToastLabel) -> String {
        Self.table[language]?[label] ?? Self.table[.english]![label]!
    }

    private static let table: [ToastLanguage: [ToastLabel: String]] = [
        .english: [.later: "Later", .open: "Open", .dismiss: "Dismiss", .output: "Show output"],
        .spanish: [.later: "Más tarde", .open: "Abrir", .dismiss: "Descartar", .output: "Ver la salida"],
        .japanese: [.later: "後で", .open: "開く", .dismiss: "閉じる", .output: "出力を表示"],
        .simplifiedChinese: [.later: "稍后", .open: "打开", .dismiss: "关闭", .output: "显示输出"],
        .traditionalChinese: [.later: "稍後", .open: "打開", .dismiss: "關閉", .output: "顯示輸出"],
    ]
}
