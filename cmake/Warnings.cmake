# One INTERFACE target carries the warning set; every target of ours links it.
add_library(kubeslurm_warnings INTERFACE)
add_library(kubeslurm::warnings ALIAS kubeslurm_warnings)
target_compile_options(kubeslurm_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough
  $<$<BOOL:${KUBESLURM_WERROR}>:-Werror>)
