"""MQTT mocks: an ``amqtt`` broker per port on the engine's event loop (config, topic
templates, the broker service and its hub, the handler). Django-free."""
