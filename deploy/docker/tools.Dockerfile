# syntax=docker/dockerfile:1
# The in-pod tools image. Rank pods run the user's image, not this one: an init container copies
# /opt/kubeslurm (bin/: the static `kubeslurm-inpod`, and its `srun` and `scontrol` links) into
# the pod, where rank 0 runs `kubeslurm-inpod batch-step`, the other ranks `kubeslurm-inpod
# step-agent`, and the batch script finds `srun` and `scontrol show hostnames` first on its
# PATH. kubeslurm-inpod is linked statically (cmd/kubeslurm-inpod/CMakeLists.txt), so it runs in
# any x86-64 image whatever its C library: an older glibc (Ubuntu 22.04's 2.35, Debian 11's
# 2.31), musl, or none (busybox).
#
# The image also carries the full CLI (`kubeslurm` and its sbatch, squeue, ... links) in
# /usr/local/bin, for running Slurm commands from a pod of this image; the init container does not
# copy it. Debian 12, non-root (uid/gid 65532).
#
#   docker build -f deploy/docker/tools.Dockerfile -t kubeslurm/kubeslurm-tools:0.1.0 .
#
# Built and run by tests/integration/images_test.sh (label long; not in CI, whose machines have no
# container engine): docs/deploy.md.

ARG DEBIAN_IMAGE=debian:12

FROM ${DEBIAN_IMAGE} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config \
      libcpprest-dev libyaml-cpp-dev libssl-dev prometheus-cpp-dev libcivetweb-dev \
      nlohmann-json3-dev libspdlog-dev \
      libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DKUBESLURM_BUILD_TESTS=OFF -DKUBESLURM_BUILD_BENCH=OFF \
 && cmake --build /build --target kubeslurm kubeslurm-inpod \
 && strip /build/bin/kubeslurm /build/bin/kubeslurm-inpod \
 && mkdir -p /out/inpod /out/cli \
 && cp -a /build/bin/kubeslurm-inpod /out/inpod/ \
 && ln -s kubeslurm-inpod /out/inpod/srun && ln -s kubeslurm-inpod /out/inpod/scontrol \
 && cp -a /build/bin/kubeslurm /out/cli/ \
 && find /build/bin -lname kubeslurm -exec cp -a {} /out/cli/ \; \
 && /out/inpod/kubeslurm-inpod --help >/dev/null && /out/cli/kubeslurm --help >/dev/null

FROM ${DEBIAN_IMAGE}-slim
# Runtime libraries of the CLI (`ldd kubeslurm` mapped to Debian 12 packages); kubeslurm-inpod
# needs none.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates libcpprest2.10 libyaml-cpp0.7 libssl3 libbrotli1 libstdc++6 \
      libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 libc-ares2 libre2-9 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/inpod/ /opt/kubeslurm/bin/
COPY --from=build /out/cli/ /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kubeslurm"]
