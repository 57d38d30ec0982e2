"""The citation gate (A3): claims, numbers and support scoring. Pure functions, no I/O.
Imports only ``core.base``; never ``core.knowledge``."""
