"""The mockd pytest plugin (registered through the ``pytest11`` entry point): nothing of the
server is imported until a test uses its fixtures."""
