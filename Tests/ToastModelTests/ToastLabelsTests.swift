import Testing
import ToastModel

@Suite("M7 labels")
struct ToastLabelsTests {
    @Test(
        "a single locale variable picks the language",
        arguments: [
            ("ja_JP.UTF-8", ToastLanguage.japanese), ("ja", .japanese), ("zh_TW", .traditionalChinese),
            ("zh_TW.UTF-8", .traditionalChinese), ("zh_HK", .traditionalChinese), ("zh_MO.UTF-8", .traditionalChinese),
            ("zh_CN", .simplifiedChinese), ("zh_CN.GB18030", .simplifiedChinese), ("zh_SG", .simplifiedChinese),
            ("zh", .simplifiedChinese), ("es_MX.UTF-8", .spanish), ("es_ES@euro", .spanish), ("en_GB.UTF-8", .english),
            ("C", .english), ("POSIX", .english), ("C.UTF-8", .english), ("fr_FR.UTF-8", .english), ("", .english),
        ])
    func singleVariable(locale: String, expected: ToastLanguage) {
        #expect(ToastLocaleResolver.language(environment: ["LANG": locale]) == expected)
    }

    @Test(
        "precedence LANGUAGE > LC_ALL > LC_MESSAGES > LANG, as gettext",
        arguments: [
            (["LANGUAGE": "ja", "LC_ALL": "es_ES.UTF-8", "LC_MESSAGES": "zh_CN", "LANG": "zh_TW"], .japanese),
            (["LC_ALL": "es_ES.UTF-8", "LC_MESSAGES": "zh_CN", "LANG": "zh_TW"], .spanish),
            (["LC_MESSAGES": "zh_CN", "LANG": "zh_TW"], .simplifiedChinese),
            (["LANG": "zh_TW"], .traditionalChinese),
            (["LC_ALL": "", "LC_MESSAGES": "ja_JP.UTF-8", "LANG": "es_MX"], .japanese),
            // LANGUAGE is a colon list; unknown entries are skipped.
            (["LANGUAGE": "fr:de:zh_TW:ja", "LANG": "es_MX.UTF-8"], .traditionalChinese),
            // No entry of LANGUAGE has labels: untranslated (English), not LANG.
            (["LANGUAGE": "fr:de", "LANG": "es_MX.UTF-8"], .english),
            // LANGUAGE is ignored when the effective locale is C/POSIX (or unset, which means C).
            (["LANGUAGE": "ja", "LC_ALL": "C"], .english),
            (["LANGUAGE": "ja", "LANG": "POSIX"], .english),
            (["LANGUAGE": "ja"], .english),
            (["LANGUAGE": "", "LANG": "ja_JP.UTF-8"], .japanese),
            (["LANGUAGE": "zh-Hant", "LANG": "en_US.UTF-8"], .traditionalChinese),
            ([:], .english),
        ] as [([String: String], ToastLanguage)])
    func precedence(environment: [String: String], expected: ToastLanguage) {
        #expect(ToastLocaleResolver.language(environment: environment) == expected)
    }

    @Test(
        "every built-in label exists in every language",
        arguments: [
            (ToastLanguage.english, ["Later", "Open", "Dismiss"]),
            (.spanish, ["Más tarde", "Abrir", "Descartar"]),
            (.japanese, ["後で", "開く", "閉じる"]),
            (.simplifiedChinese, ["稍后", "打开", "关闭"]),
            (.traditionalChinese, ["稍後", "打開", "關閉"]),
        ])
    func table(language: ToastLanguage, expected: [String]) {
        let labels = ToastLabels(language: language)
        #expect([labels[.later], labels[.open], labels[.dismiss]] == expected)
    }

    @Test("the center shows built-in labels in its language", arguments: ToastLanguage.allCases)
    func centerUsesLabels(language: ToastLanguage) {
        let h = Harness(labels: ToastLabels(language: language))
        h.center.present(ToastMessage(id: "A", title: "A", swipeActions: ToastSwipeActions(trailing: .later)))
        #expect(
            h.presenter.presentation(of: "A")?.request.actions.map(\.label) == [
                ToastLabels(language: language)[.later]
            ])
        #expect(ToastLabels.resolved(environment: ["LANG": "zh_HK.UTF-8"]).language == .traditionalChinese)
    }
}
