// The `toastkit` command line: parsing, running, output (issue 5).
