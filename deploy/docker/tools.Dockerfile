# syntax=docker/dockerfile:1
# The in-pod tools image: the `kubeslurm` CLI and its Slurm-named links (sbatch, squeue,
# scontrol, srun, ...: one binary that acts on the name it is called by), which rank pods use:
# `srun`, `scontrol show hostnames "$SLURM_JOB_NODELIST"`, and the step agent and batch launcher
# (`kubeslurm step-agent`, `kubeslurm batch-step`). Debian 12, non-root (uid/gid 65532).
#
# Rank pods run the user's image, not this one: an init container copies /opt/kubeslurm (bin/
# and lib/) into the pod. So the binary carries its own libraries: lib/ holds every shared
# library it needs beyond glibc, found through an RPATH of $ORIGIN/../lib (DT_RPATH, not
# RUNPATH, so that it also applies to the libraries' own dependencies). The user's image needs
# glibc 2.36 or later (Debian 12, Ubuntu 22.10+; NGC PyTorch images since 23.xx are Ubuntu 22.04
# with 2.35: build this image FROM ubuntu:22.04 for those).
#
#   docker build -f deploy/docker/tools.Dockerfile -t kubeslurm/kubeslurm-tools:0.1.0 .
#
# A pod can run it directly, or copy /opt/kubeslurm/bin into a shared emptyDir from an init
# container (`cp -a /opt/kubeslurm/bin/. /kubeslurm/`) so that the user's own image gets the tools.
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
      '-DCMAKE_BUILD_RPATH=$ORIGIN/../lib' '-DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags' \
 && cmake --build /build --target kubeslurm \
 && strip /build/bin/kubeslurm \
 && mkdir -p /out/bin /out/lib \
 && cp -a /build/bin/kubeslurm /out/bin/ \
 && find /build/bin -lname kubeslurm -exec cp -a {} /out/bin/ \; \
 && ldd /out/bin/kubeslurm | awk '$3 ~ /^\// {print $3}' \
      | grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux-x86-64)\.so' \
      | xargs -r -I{} cp -L {} /out/lib/ \
 && /out/bin/kubeslurm --help >/dev/null

FROM ${DEBIAN_IMAGE}-slim
# Runtime libraries of the binary (`ldd kubeslurm` mapped to Debian 12 packages).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates libcpprest2.10 libyaml-cpp0.7 libssl3 libbrotli1 libstdc++6 \
      libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 libc-ares2 libre2-9 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/bin/ /opt/kubeslurm/bin/
COPY --from=build /out/lib/ /opt/kubeslurm/lib/
ENV PATH=/opt/kubeslurm/bin:$PATH
USER 65532:65532
ENTRYPOINT ["/opt/kubeslurm/bin/kubeslurm"]
