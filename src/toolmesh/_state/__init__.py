"""State a gateway shares across its processes and machines: in-process, or in Redis."""
