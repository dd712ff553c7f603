// The `toastkit` command-line tool: everything lives in ToastKitCommandLine; this only runs it and exits.
import ToastKitCommandLine

ToastKitCommand.main()
