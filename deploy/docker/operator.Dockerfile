# syntax=docker/dockerfile:1
# The kubeslurm-operator image: built from source on Debian 12 (the distribution the project
# builds and tests on, FACTS.md), run on debian:12-slim with only the shared libraries the binary
# links, as uid/gid 65532 (the chart's podSecurityContext; no root, no shell needed at runtime).
#
#   docker build -f deploy/docker/operator.Dockerfile -t kubeslurm/kubeslurm-operator:0.1.0 .
#   (or: cmake --build build --target docker-images, where docker is installed)
#
# Built and run by tests/integration/images_test.sh (label long; not in CI, whose machines have no
# container engine): docs/deploy.md.

ARG DEBIAN_IMAGE=debian:12

FROM ${DEBIAN_IMAGE} AS build
# The operator's build dependencies (run's PACKAGES, less the test, lint and sandbox tools).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config \
      libcpprest-dev libyaml-cpp-dev libssl-dev prometheus-cpp-dev libcivetweb-dev \
      nlohmann-json3-dev libspdlog-dev \
      libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# No tests or benchmarks: they need GTest/benchmark and a sandbox, not what ships.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DKUBESLURM_BUILD_TESTS=OFF -DKUBESLURM_BUILD_BENCH=OFF \
 && cmake --build /build --target kubeslurm-operator \
 && strip /build/bin/kubeslurm-operator \
 && /build/bin/kubeslurm-operator --help >/dev/null

FROM ${DEBIAN_IMAGE}-slim
# Runtime libraries of the binary: `ldd kubeslurm-operator` mapped to Debian 12 packages.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates libcpprest2.10 libyaml-cpp0.7 libssl3 libprometheus-cpp-core1.0 \
      libprometheus-cpp-pull1.0 libcivetweb1 libspdlog1.10 libfmt9 libbrotli1 libstdc++6 \
      libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 libc-ares2 libre2-9 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/bin/kubeslurm-operator /usr/local/bin/kubeslurm-operator
# 65532: "nonroot" by convention (distroless), the uid the chart runs the pod as.
USER 65532:65532
# /metrics and the probes (the chart's ports.metrics and ports.probes).
EXPOSE 8080 8081 9443
ENTRYPOINT ["/usr/local/bin/kubeslurm-operator"]
