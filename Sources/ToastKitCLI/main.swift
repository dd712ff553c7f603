// The `toastkit` command-line tool: everything lives in ToastKitCommandLine; this only runs it and exits.
import Glibc
import ToastKitCommandLine

let code = await ToastKitCommand.run(arguments: ToastKitCommand.rawArguments())
exit(code)
