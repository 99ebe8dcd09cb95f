# `docker-images`: builds the operator and in-pod tools images (deploy/docker/*.Dockerfile) with
# the repository as build context. Defined only where a `docker` client is found AND its daemon
# answers: the project's build machines have no daemon (some have the client alone), so there
# the target does not exist and nothing fails.
#
# Include from the top-level CMakeLists.txt:  include(deploy/docker/docker-images.cmake)
#   cmake --build build --target docker-images
#   -DKUBESLURM_IMAGE_REGISTRY=registry.example.com/ -DKUBESLURM_IMAGE_TAG=0.1.0
find_program(KUBESLURM_DOCKER docker)
set(_kubeslurm_docker_ok FALSE)
if(KUBESLURM_DOCKER)
  # A client without a daemon (no socket) fails at once; TIMEOUT bounds an unreachable DOCKER_HOST.
  execute_process(COMMAND ${KUBESLURM_DOCKER} version --format "{{.Server.Version}}"
                  RESULT_VARIABLE _kubeslurm_docker_rc OUTPUT_QUIET ERROR_QUIET TIMEOUT 10)
  if(_kubeslurm_docker_rc EQUAL 0)
    set(_kubeslurm_docker_ok TRUE)
  else()
    message(STATUS "docker client found but no daemon answers: no docker-images target")
  endif()
endif()
if(_kubeslurm_docker_ok)
  # The tag defaults to the chart's appVersion, the tag its Deployment pulls.
  file(STRINGS ${PROJECT_SOURCE_DIR}/charts/kubeslurm/Chart.yaml _kubeslurm_app_version
       REGEX "^appVersion:")
  string(REGEX REPLACE "^appVersion: *\"?([^\"]*)\"?.*$" "\\1" _kubeslurm_app_version
         "${_kubeslurm_app_version}")
  set(KUBESLURM_IMAGE_REGISTRY "" CACHE STRING "prefix of the image names, e.g. registry.example.com/")
  set(KUBESLURM_IMAGE_TAG "${_kubeslurm_app_version}" CACHE STRING "tag of the images")
  set(_kubeslurm_images "")
  foreach(image operator tools)
    set(_name "${KUBESLURM_IMAGE_REGISTRY}kubeslurm/kubeslurm-${image}:${KUBESLURM_IMAGE_TAG}")
    add_custom_target(docker-image-${image}
      COMMAND ${KUBESLURM_DOCKER} build -f ${PROJECT_SOURCE_DIR}/deploy/docker/${image}.Dockerfile
              -t ${_name} ${PROJECT_SOURCE_DIR}
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      COMMENT "docker build ${_name}"
      USES_TERMINAL VERBATIM)
    list(APPEND _kubeslurm_images docker-image-${image})
  endforeach()
  add_custom_target(docker-images DEPENDS ${_kubeslurm_images})
endif()
