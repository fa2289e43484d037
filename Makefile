# geo-cluster: build, run and test on a fresh Debian machine with Swift.
# Each target installs the system packages it needs when they are missing.

SWIFT ?= swift
# tzdata: places layers' opening hours are read in their time zone (layers.json).
# libjs-leaflet: the map library of the viewer page at / (served from the binary).
# libdeflate-dev: gzip of response bodies.
APT_PACKAGES := libproj-dev pkg-config zlib1g-dev libdeflate-dev libsqlite3-dev tzdata libjs-leaflet
# The viewer page's tests draw it in headless Chromium (with a font for Korean); the
# replica tests start a throwaway PostgreSQL cluster and talk HTTP through curl; the
# walking-network import tests read OpenStreetMap extracts with osmium.
TEST_APT_PACKAGES := chromium fonts-noto-cjk postgresql curl osmium-tool
CONFIG ?= debug

.PHONY: all deps test-deps apt-install build release run test fuzz clean

all: build

## deps: install the system libraries the package links against (PROJ, SQLite), when missing.
deps:
	@$(MAKE) --no-print-directory apt-install PACKAGES="$(APT_PACKAGES)"

## test-deps: also what the tests run (Chromium for the viewer page, PostgreSQL and curl
## for the replica tests), when missing.
test-deps: deps
	@$(MAKE) --no-print-directory apt-install PACKAGES="$(TEST_APT_PACKAGES)"

apt-install:
	@missing=""; \
	for p in $(PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build -c $(CONFIG)

release: deps
	SWIFT=$(SWIFT) Scripts/swift-retrying.sh build -c release --product geo-cluster

## run: start geo-cluster on the sample layers in Data/ (http://127.0.0.1:8080).
run: release
	.build/release/geo-cluster serve --data Data $(RUN_ARGS)

## test: every test suite; fixtures from ../shared are used when present.
## A crash of the build tool itself (not a compile error) is retried once, saying so.
test: test-deps
	SWIFT=$(SWIFT) Scripts/swift-retrying.sh build --build-tests
	$(SWIFT) test --skip-build

## fuzz: build the libFuzzer targets (Fuzz/README.md) and run each for FUZZ_SECONDS (60).
fuzz: deps
	Fuzz/run.sh

clean:
	rm -rf .build .build-fuzz
