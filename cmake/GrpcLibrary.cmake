# kubeslurm_grpc_library(TARGET PROTO): a static library of protoc's C++ and gRPC code for PROTO
# (a path relative to the source root), with its headers at "<dir>/<name>.pb.h" and
# "<dir>/<name>.grpc.pb.h" as the source tree names them. Generated sources compile without our
# warning flags: they are protoc's code, not ours.
#
# A binary with the property KUBESLURM_STATIC_GRPC set links gRPC and protobuf (and what they
# need) from Debian's static archives instead of the shared libraries: the in-pod tool, which
# must carry everything it needs into the user's image. The property is read on the binary that
# links (a usage requirement's $<TARGET_PROPERTY:prop> names the consumer), so one generated
# library serves both kinds of binary.
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_program(KUBESLURM_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
if(NOT TARGET kubeslurm_grpc_static)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(KUBESLURM_GRPC_PC REQUIRED grpc++ protobuf)
  add_library(kubeslurm_grpc_static INTERFACE)
  # One group: the archives' order among absl's many parts is not worth spelling out.
  target_link_libraries(kubeslurm_grpc_static INTERFACE
    -Wl,--start-group ${KUBESLURM_GRPC_PC_STATIC_LDFLAGS} -Wl,--end-group)
endif()

function(kubeslurm_grpc_library target proto)
  get_filename_component(dir ${proto} DIRECTORY)
  get_filename_component(name ${proto} NAME_WE)
  set(generated_dir ${CMAKE_CURRENT_BINARY_DIR}/generated)
  set(base ${generated_dir}/${dir}/${name})
  set(generated ${base}.pb.cc ${base}.pb.h ${base}.grpc.pb.cc ${base}.grpc.pb.h)
  add_custom_command(
    OUTPUT ${generated}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${generated_dir}
    COMMAND protobuf::protoc --proto_path=${PROJECT_SOURCE_DIR} --cpp_out=${generated_dir}
            --grpc_out=${generated_dir} --plugin=protoc-gen-grpc=${KUBESLURM_GRPC_CPP_PLUGIN}
            ${PROJECT_SOURCE_DIR}/${proto}
    DEPENDS ${PROJECT_SOURCE_DIR}/${proto}
    COMMENT "protoc ${proto}")
  add_library(${target} STATIC ${generated})
  target_include_directories(${target} SYSTEM PUBLIC ${generated_dir})
  set(static $<BOOL:$<TARGET_PROPERTY:KUBESLURM_STATIC_GRPC>>)
  target_link_libraries(${target} PUBLIC
    $<$<NOT:${static}>:gRPC::grpc++> $<$<NOT:${static}>:protobuf::libprotobuf>
    $<${static}:kubeslurm_grpc_static>)
endfunction()
