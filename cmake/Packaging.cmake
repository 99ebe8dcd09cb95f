# A Debian package of the CLI, as researchers install Slurm's tools: `cpack -G DEB` in a build
# tree (or `./run package`) writes kubeslurm-client_<version>_<arch>.deb with /usr/bin/kubeslurm
# and its Slurm-named links. dpkg-shlibdeps computes its Depends from the libraries the binary
# links (Debian's cpprestsdk, gRPC, yaml-cpp, OpenSSL ...), so `apt-get install ./x.deb` on a
# Debian 12 host pulls exactly those. It replaces Debian's slurm-client, whose /usr/bin/sbatch
# and friends are the same names (it does not say it provides slurm-client: salloc, sbcast and
# the rest are not there). Tested by tests/integration/package_test.sh.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kubeslurm-client)
set(CPACK_PACKAGE_VENDOR kubeslurm)
set(CPACK_PACKAGE_CONTACT "kubeslurm maintainers <kubeslurm@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Slurm commands (sbatch, squeue, scancel, sinfo, sacct, scontrol, ...) for kubeslurm")
set(CPACK_PACKAGE_DESCRIPTION
    "The commands researchers know from Slurm, with Slurm's options, messages and output \
formats, against a Kubernetes cluster that runs the kubeslurm operator. They read the \
kubeconfig as kubectl does.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)  # the build keeps -g; a login host does not need 60 MB of it
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL cli)
set(CPACK_DEBIAN_CLI_PACKAGE_NAME kubeslurm-client)
set(CPACK_DEBIAN_CLI_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_CONFLICTS slurm-client)
set(CPACK_DEBIAN_PACKAGE_REPLACES slurm-client)
include(CPack)
