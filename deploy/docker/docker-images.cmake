# `docker-images`: builds the operator and in-pod tools images (deploy/docker/*.Dockerfile) with
# the repository as build context, with `docker` where its daemon answers, else `podman` (no
# daemon needed; Debian's package builds them as root). Defined only where one of them works:
# the project's build machines have neither by default (some have a docker client alone), so
# there the target does not exist and nothing fails.
#
# Include from the top-level CMakeLists.txt:  include(deploy/docker/docker-images.cmake)
#   cmake --build build --target docker-images
#   -DKUBESLURM_IMAGE_REGISTRY=registry.example.com/ -DKUBESLURM_IMAGE_TAG=0.1.0
#   -DKUBESLURM_DEBIAN_IMAGE=localhost/debian:12   (the base image; its -slim tag must exist)
set(_kubeslurm_docker_ok FALSE)
foreach(_kubeslurm_engine docker podman)
  find_program(_kubeslurm_engine_path ${_kubeslurm_engine})
  if(_kubeslurm_engine_path AND NOT _kubeslurm_docker_ok)
    # A docker client without a daemon fails at once; TIMEOUT bounds an unreachable DOCKER_HOST.
    execute_process(COMMAND ${_kubeslurm_engine_path} version RESULT_VARIABLE _kubeslurm_docker_rc
                    OUTPUT_QUIET ERROR_QUIET TIMEOUT 10)
    if(_kubeslurm_docker_rc EQUAL 0)
      set(KUBESLURM_DOCKER ${_kubeslurm_engine_path})
      set(_kubeslurm_docker_ok TRUE)
    else()
      message(STATUS "${_kubeslurm_engine} found but does not answer: not used for images")
    endif()
  endif()
  unset(_kubeslurm_engine_path CACHE)
endforeach()
if(_kubeslurm_docker_ok)
  # The tag defaults to the chart's appVersion, the tag its Deployment pulls.
  file(STRINGS ${PROJECT_SOURCE_DIR}/charts/kubeslurm/Chart.yaml _kubeslurm_app_version
       REGEX "^appVersion:")
  string(REGEX REPLACE "^appVersion: *\"?([^\"]*)\"?.*$" "\\1" _kubeslurm_app_version
         "${_kubeslurm_app_version}")
  set(KUBESLURM_IMAGE_REGISTRY "" CACHE STRING "prefix of the image names, e.g. registry.example.com/")
  set(KUBESLURM_IMAGE_TAG "${_kubeslurm_app_version}" CACHE STRING "tag of the images")
  set(KUBESLURM_DEBIAN_IMAGE "debian:12" CACHE STRING "base image of the build and runtime stages")
  set(_kubeslurm_images "")
  foreach(image operator tools)
    set(_name "${KUBESLURM_IMAGE_REGISTRY}kubeslurm/kubeslurm-${image}:${KUBESLURM_IMAGE_TAG}")
    add_custom_target(docker-image-${image}
      COMMAND ${KUBESLURM_DOCKER} build -f ${PROJECT_SOURCE_DIR}/deploy/docker/${image}.Dockerfile
              --build-arg DEBIAN_IMAGE=${KUBESLURM_DEBIAN_IMAGE} -t ${_name} ${PROJECT_SOURCE_DIR}
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      COMMENT "docker build ${_name}"
      USES_TERMINAL VERBATIM)
    list(APPEND _kubeslurm_images docker-image-${image})
  endforeach()
  add_custom_target(docker-images DEPENDS ${_kubeslurm_images})
endif()
