"""The lite2onnx.v1 wire contract: messages and the Converter stub, generated
at build time from proto/lite2onnx/v1/converter.proto (protoc and
grpc_python_plugin; python/CMakeLists.txt)."""
