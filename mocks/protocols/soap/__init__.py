"""SOAP mocks: WSDL 1.1 services on the mock port (``type: soap``).

Owns: the ``soap`` config model (:mod:`.config`), the WSDL reader shared with the importer
(:mod:`.wsdl`) with the files a WSDL imports (:mod:`.documents`), its schema components by
qualified name (:mod:`.xsd`) and the sample answers written from them (:mod:`.samples`),
envelopes and faults of SOAP 1.1 and 1.2 (:mod:`.envelope`), the bridge from
operations to the shared tables (:mod:`.stateful`), the handler and its route action
(:mod:`.handler`) and the admin views of SOAP handlers (:mod:`.control`).

Who may call it: the protocol registry (:data:`mocks.protocols.PROTOCOLS`), the WSDL importer,
the engine-control routes and the admin API. Concurrency: compiled objects are immutable and
served on the engine's event loop; a request never awaits between reading and writing a table.
Django-free.

Source: SPEC "SOAP mock"; behavior notes §1, §4, §10, §12, §13.
"""
