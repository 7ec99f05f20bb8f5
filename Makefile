# ScalWS top-level Makefile (committed; configure never writes it).
#
# The real build is $(B)/Makefile, written by ./configure; every target here
# delegates to it. If the tree is not configured yet, the missing Debian
# packages are installed first (as root; otherwise the apt-get line is
# printed), then ./configure runs with its defaults. When configure or a
# module manifest changes, configure re-runs with the arguments it had
# ($(B)/reconfigure).
#
#   make                   build objs/scalwsd and objs/modules/*.so
#   make run               build and run in the foreground on conf/scalws.conf
#   make test              unit tests, integration tests (a selection on io_uring too), budgets
#   make test-unit         unit tests only (tests/unit, Check)
#   make test-integration  integration tests only (tests/integration, pytest)
#   make test-io-uring     integration tests with "use io_uring;" in every configuration
#                          (URING_TESTS="tests/integration/test_tls.py ...": only those)
#   make test-io-uring-selection  the files that exercise the event method on io_uring
#   make test-budget       instructions per request against bench/budgets (callgrind)
#   make test-sanitize     the tests on an ASan + UBSan build in objs-san
#   make install           install under the prefix (DESTDIR=... to stage)
#   make bench             run bench/run against the build
#   make bench-idle        memory per idle keep-alive connection (bench/idle)
#   make pgo               a profile-guided build in objs-pgo (plain build untouched)
#   make fuzz              libFuzzer targets in tests/fuzz, FUZZ_TIME seconds each
#                          (FUZZ_TARGETS="fuzz_conf_read ...": only those)
#   make deb               Debian packages scalws, scalws-dev in objs-deb (lintian-checked)
#   make test-package      build them, install and run them on a fresh Debian 12 root
#   make clean             remove what the build made; distclean: objs too
#
# Another build directory: make B=DIR (after ./configure --builddir=DIR).

B ?= objs
# B is ours: the generated Makefile has a B of its own (absolute), which a
# command-line B=... passed down would override.
MAKEOVERRIDES := $(filter-out B=%,$(MAKEOVERRIDES))

# modules/ itself: its time changes when a module directory comes or goes.
CONFIGURE_INPUTS = configure $(filter-out auto/deps,$(wildcard auto/*)) \
                   $(wildcard modules/. modules/*/config)

BUILD_TARGETS = all modules tests run install bench bench-idle pgo
TEST_TARGETS  = test test-unit test-integration test-io-uring test-io-uring-selection test-budget test-sanitize

.PHONY: $(BUILD_TARGETS) $(TEST_TARGETS) fuzz clean distclean help deb test-package
.DEFAULT_GOAL := all

$(BUILD_TARGETS): $(B)/Makefile
	@$(MAKE) --no-print-directory -f $(B)/Makefile $@

# The fuzz targets need clang (auto/deps fuzz installs it).
fuzz: $(B)/Makefile
	@sh auto/deps fuzz
	@$(MAKE) --no-print-directory -f $(B)/Makefile $@

# The test packages are checked on every run (it is quick): a test needs
# more than the build does (Check, pytest, pycurl, curl).
# A tree configured before Check was installed (make, then make test on a
# fresh machine) is configured again once Check is there.
$(TEST_TARGETS):
	@sh auto/deps test
	@$(MAKE) --no-print-directory -s $(B)/Makefile
	@if grep -q '^CHECK_FOUND *= *no' $(B)/config.mk 2> /dev/null \
	    && pkg-config --exists check 2> /dev/null; then \
	    echo "Check is installed now: running configure again ($(B)/reconfigure)"; \
	    sh $(B)/reconfigure; \
	fi
	@$(MAKE) --no-print-directory -f $(B)/Makefile $@

$(B)/Makefile: $(CONFIGURE_INPUTS)
	@if [ -f $(B)/reconfigure ]; then \
	    echo "configure inputs changed: running configure again ($(B)/reconfigure)"; \
	    sh $(B)/reconfigure; \
	else \
	    sh auto/deps build && ./configure $(if $(filter-out objs,$(B)),--builddir=$(B)); \
	fi

# The packages are built from a copy of the tree (contrib/debian/make-deb),
# whatever is configured here; DEB_BUILD_OPTIONS passes through.
DEB_DIR ?= objs-deb
deb:
	@sh auto/deps package
	sh contrib/debian/make-deb $(DEB_DIR)

# As root: debootstrap, chroot (tests/package/test_package.py says more).
test-package:
	@sh auto/deps package
	@mkdir -p objs-deb
	SCALWS_SRC=$(CURDIR) /usr/bin/python3 -m pytest -q -p no:cacheprovider \
	    --basetemp=$(CURDIR)/objs-deb/pytest tests/package

clean:
	@if [ -f $(B)/Makefile ]; then $(MAKE) --no-print-directory -f $(B)/Makefile clean; fi

distclean:
	@if [ -f $(B)/Makefile ]; then $(MAKE) --no-print-directory -f $(B)/Makefile distclean; fi

help:
	@sed -n 's/^#   make/make/p' Makefile
