"""The wire contract between parties and the coordinator (generated code beside the .proto)."""
