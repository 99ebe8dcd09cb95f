# kubeslurm_grpc_library(TARGET PROTO): a static library of protoc's C++ and gRPC code for PROTO
# (a path relative to the source root), with its headers at "<dir>/<name>.pb.h" and
# "<dir>/<name>.grpc.pb.h" as the source tree names them. Generated sources compile without our
# warning flags: they are protoc's code, not ours.
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_program(KUBESLURM_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)

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
  target_link_libraries(${target} PUBLIC gRPC::grpc++ protobuf::libprotobuf)
endfunction()
