# Writes OUT, a C++ file defining lite2onnx::server::openapi_yaml() as the text of IN.
file(READ "${IN}" text)
file(WRITE "${OUT}.tmp"
  "// Generated from docs/openapi.yaml by server/embed.cmake.\n"
  "#include \"server/openapi.h\"\n"
  "namespace lite2onnx::server {\n"
  "std::string_view openapi_yaml() {\n"
  "  static constexpr std::string_view kText = R\"lite2onnx_yaml(${text})lite2onnx_yaml\";\n"
  "  return kText;\n"
  "}\n"
  "}  // namespace lite2onnx::server\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
