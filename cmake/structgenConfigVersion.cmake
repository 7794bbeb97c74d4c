# The version find_package(structgen <version>) compares: codegen/version.py's GENERATOR_VERSION,
# read here so that the generator states its version once. Compatible: the same major version,
# and at least the version asked for (0.x: the same minor version, as semantic versioning has it).
file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/../codegen/version.py" _line REGEX "^GENERATOR_VERSION = ")
string(REGEX REPLACE "^GENERATOR_VERSION = \"([0-9.]+)\".*$" "\\1" PACKAGE_VERSION "${_line}")
set(PACKAGE_VERSION_COMPATIBLE FALSE)
if(PACKAGE_FIND_VERSION)
  string(REGEX MATCH "^[0-9]+" _have_major "${PACKAGE_VERSION}")
  string(REGEX MATCH "^[0-9]+\\.[0-9]+" _have_minor "${PACKAGE_VERSION}")
  string(REGEX MATCH "^[0-9]+\\.[0-9]+" _want_minor "${PACKAGE_FIND_VERSION}")
  if(PACKAGE_VERSION VERSION_GREATER_EQUAL PACKAGE_FIND_VERSION
     AND _have_major STREQUAL PACKAGE_FIND_VERSION_MAJOR
     AND (NOT _have_major STREQUAL "0" OR _have_minor STREQUAL _want_minor))
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
  endif()
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
endif()
if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
  set(PACKAGE_VERSION_EXACT TRUE)
endif()
