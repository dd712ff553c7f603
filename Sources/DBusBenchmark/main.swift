print("dbus-benchmark: TODO")
