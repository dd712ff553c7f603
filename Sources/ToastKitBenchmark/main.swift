print("toastkit-benchmark: placeholder")
