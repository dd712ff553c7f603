import ToastKitAgent

/// One option a command accepts.
struct OptionSpec: Sendable {
    /// The short letter, if any (`s` for `-s`).
    var short: Character?
    /// The long name (`status` for `--status`).
    var long: String
    /// Whether it takes a value.
    var takesValue: Bool
    /// What the option means, when its name says it differently (dunstify's `--replace` is `replace-id`).
    var meaning: String
    /// toastkit runs itself with it (`agent --keeper`): the man page says so, the completions do not offer it.
    var isInternal = false

    init(short: Character?, long: String, takesValue: Bool, meaning: String? = nil, isInternal: Bool = false) {
        self.short = short
        self.long = long
        self.takesValue = takesValue
        self.meaning = meaning ?? long
        self.isInternal = isInternal
    }

    /// How errors name it: `-s/--status` or `--id`.
    var display: String {
        if let short { return "-\(short)/--\(long)" }
        return "--\(long)"
    }
}

/// One option found on the command line, with its value.
struct ParsedOption: Sendable {
    var spec: OptionSpec
    var value: Argument?

    /// The value's text, or a data error naming the option when it is not UTF-8.
    func text() throws(CommandFailure) -> String {
        try (value ?? "").text(as: "the value of \(spec.display)")
    }
}

/// A command line split into options (in order) and positional arguments, per a table of options.
struct SplitArguments: Sendable {
    var options: [ParsedOption] = []
    var positionals: [Argument] = []

    /// Splits `arguments` for `command`: `--long`, `--long=value`, `--long value`, `-x value`, `-xvalue`, bundled
    /// flags (`-ew`), `--` to end options, and `-` as a positional argument (standard input).
    init(_ arguments: ArraySlice<Argument>, specs: [OptionSpec], command: String) throws(CommandFailure) {
        var index = arguments.startIndex
        var optionsEnded = false
        func missingValue(_ spec: OptionSpec) -> CommandFailure {
            if spec.short == "h", spec.long == "hint" {
                return .usage(
                    "-h/--hint needs a value TYPE:NAME:VALUE (-h is the hint flag, as in notify-send; for help use "
                        + "--help)")
            }
            return .usage("\(spec.display) needs a value; see toastkit \(command) --help")
        }
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            let text = argument.text
            if optionsEnded || text == "-" || !text.hasPrefix("-") {
                positionals.append(argument)
                continue
            }
            if text == "--" {
                optionsEnded = true
                continue
            }
            if argument.problem != nil {
                _ = try argument.text(as: "option \"\(text)\"")
            }
            if text.hasPrefix("--") {
                let body = text.dropFirst(2)
                let name = String(body.prefix { $0 != "=" })
                let inline: String? = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
                guard let spec = specs.first(where: { $0.long == name }) else {
                    throw .usage("\(command): unknown option --\(name); see toastkit \(command) --help")
                }
                if spec.takesValue {
                    if let inline {
                        options.append(ParsedOption(spec: spec, value: Argument(inline)))
                    } else if index < arguments.endIndex {
                        options.append(ParsedOption(spec: spec, value: arguments[index]))
                        index += 1
                    } else {
                        throw missingValue(spec)
                    }
                } else {
                    guard inline == nil else { throw .usage("\(spec.display) takes no value") }
                    options.append(ParsedOption(spec: spec, value: nil))
                }
                continue
            }
            // A cluster of short options: flags, then at most one option with a value (the rest, or the next one).
            var letters = Substring(text.dropFirst())
            while let letter = letters.first {
                letters = letters.dropFirst()
                guard let spec = specs.first(where: { $0.short == letter }) else {
                    let hint = letter == "?" || letter == "h" ? " (for help use --help)" : ""
                    throw .usage("\(command): unknown option -\(letter)\(hint); see toastkit \(command) --help")
                }
                guard spec.takesValue else {
                    options.append(ParsedOption(spec: spec, value: nil))
                    continue
                }
                if !letters.isEmpty {
                    options.append(ParsedOption(spec: spec, value: Argument(String(letters))))
                } else if index < arguments.endIndex {
                    options.append(ParsedOption(spec: spec, value: arguments[index]))
                    index += 1
                } else {
                    throw missingValue(spec)
                }
                break
            }
        }
    }
}
