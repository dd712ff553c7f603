// The `toastkit` command-line tool (issue 5).
print("toastkit: coming in the CLI issue")
