"""Operations the agent can run and the confirmation cards that guard every change (C1-C4, A3 live data).

``model`` (Operation, Execution, errors), ``params`` (JSON-schema checks), ``definitions`` (the tenant's HTTP
actions and MCP servers), ``builtin`` (customer profiles and the built-in operations), ``http`` and ``mcp`` (the
executors), ``registry`` (all operations of a tenant), ``cards`` (propose, decide, execute once), ``ledger``,
``switch`` (the kill switches), ``tools`` (the agent's tools: live reads and card proposals), ``service``
(what the runtime exposes as ``rt.actions``), ``cli``.

Imports base, tenancy, knowledge, grounding and agent; never channels, gaps, api or pages. The agent reaches
these operations only through the tools the runtime registers for a turn.
"""
