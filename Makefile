# Entry points; each target runs one script (see the scripts for their options).
.PHONY: test bench demo fuzz valgrind

test:
	scripts/test.sh

bench:
	scripts/bench.sh $(BENCH_FLAGS)

demo:
	scripts/demo.sh

fuzz:
	scripts/fuzz.sh

valgrind:
	scripts/valgrind.sh
