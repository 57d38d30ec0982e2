"""Booking that really books (B1-B5).

``model`` (intervals, slots, CreateResult, errors), ``schedule`` (the one schedule), ``slots`` (grid and availability,
pure), ``normalize``/``fields``/``dates`` (what a model sends, to one checked booking), ``bookings``, ``holds``,
``blocks``, ``offers`` (the tables), ``calendars`` and ``caldav_calendar`` (where busy time and events live),
``recheck`` (the re-check inside the write), ``creating`` (create, confirm a hold, move, cancel), ``outbox``,
``mailer``, ``messages``, ``ics`` (confirmations), ``operations`` (cancel and reschedule as cards), ``tools`` (the
agent's check_availability and create_booking), ``service`` (``rt.booking``), ``cli``.

Imports base, tenancy, agent (the Tool interface) and actions (cards for cancel and reschedule); never channels,
gaps, qa, api or pages. The agent reaches booking only through the tools the runtime registers.
"""
