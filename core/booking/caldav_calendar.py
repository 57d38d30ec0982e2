"""A CalDAV calendar (Nextcloud, iCloud, Fastmail, Radicale) as the booking calendar: staff keep editing in their own
calendar app, and every availability and every re-check reads it right before writing.

``busy()`` sends one calendar-query REPORT (a time range widened by a day, then cut exactly here) and reads the
events with ``icalendar``; recurring events are expanded (RRULE, RDATE, EXDATE, moved instances), TRANSPARENT
("free") and CANCELLED events are not busy, an all-day event is busy for its whole local day and a floating time
is a wall time, both in the business's zone. Writes send their HTTP preconditions themselves — never caldav's
save(), whose no-overwrite is a GET then a PUT that can race: a create PUTs ``<collection>/<uid>.ics`` with
``If-None-Match: *``, an update and a delete send ``If-Match: <the ETag we read>``. A 412 (someone else wrote
first) raises :class:`SlotTaken` and nothing is overwritten; any connection, permission or parse failure raises
:class:`CalendarUnavailable` with a message for people, so no times are offered from a calendar we cannot read.
"""
from __future__ import annotations

from collections.abc import Collection, Iterator
from datetime import date, datetime, time, timedelta, timezone
from urllib.parse import quote, urlsplit, urlunsplit
from zoneinfo import ZoneInfo

import caldav
import icalendar
import recurring_ical_events  # caldav's own expander (a requirement of caldav==2.0.1)
import requests
from caldav.lib import error as dav_error
from lxml import etree

from core.base.clock import SYSTEM, Clock, iso
from core.booking.model import CalendarUnavailable, Interval, SlotTaken

PRODID = "-//Cobertura//Booking//EN"
_DAV, _CAL = "{DAV:}", "{urn:ietf:params:xml:ns:caldav}"
_XML = {"Content-Type": "application/xml; charset=utf-8"}
_ICS = {"Content-Type": "text/calendar; charset=utf-8"}
_MARGIN = timedelta(days=1)  # the server reads all-day and floating times in its own zone: ask wider, cut here
_PROPFIND = ('<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/>'
             '<D:displayname/><D:current-user-privilege-set/></D:prop></D:propfind>')
_GETETAG = ('<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop>'
            '</D:propfind>')
_QUERY = ('<?xml version="1.0" encoding="utf-8"?><C:calendar-query xmlns:D="DAV:" '
          'xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><D:getetag/><C:calendar-data/></D:prop><C:filter>'
          '<C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT"><C:time-range start="{start}" end="{end}"/>'
          '</C:comp-filter></C:comp-filter></C:filter></C:calendar-query>')
_SAFE_XML = etree.XMLParser(resolve_entities=False, no_network=True)


def _public(url: str) -> str:
    """The address as people may see it: any user:password@ taken out."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else "")))


def _stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _calendar_data(tree) -> list[tuple[str, str]]:
    """(href, iCalendar text) of every event in a calendar-query answer (a 207 multistatus); a response or a
    propstat that is not 200 (RFC 4918: a property the server did not give) carries no event."""
    if tree is None or tree.tag != f"{_DAV}multistatus":
        raise ValueError("the calendar-query answer is not a DAV multistatus")
    found = []
    for response in tree.iterfind(f"{_DAV}response"):
        href = (response.findtext(f"{_DAV}href") or "").strip()
        for propstat in response.iterfind(f"{_DAV}propstat"):
            status = (propstat.findtext(f"{_DAV}status") or "").split()
            text = propstat.findtext(f"{_DAV}prop/{_CAL}calendar-data")
            if len(status) > 1 and status[1] == "200" and text and text.strip():
                found.append((href, text))
    return found


def _preconditions(body: str) -> set[str]:
    """The precondition elements of a DAV:error answer (RFC 4918 16, RFC 4791 5.3.2.1), e.g.
    ``{urn:ietf:params:xml:ns:caldav}no-uid-conflict``; an answer that is not one names none."""
    try:
        root = etree.fromstring(body.encode("utf-8"), parser=_SAFE_XML) if body and body.strip() else None
    except (etree.LxmlError, ValueError):
        return set()
    if root is None or root.tag != f"{_DAV}error":
        return set()
    return {child.tag for child in root if isinstance(child.tag, str)}


class CalDavCalendar:
    """One CalDAV calendar collection; ``url`` is the collection itself (.../calendars/USER/NAME/).

    ``timezone`` is the business's zone (``Schedule.timezone``): it places all-day events and floating times;
    ``password_env`` (the variable's name, never the password) only makes the messages name it."""

    name = "caldav"

    def __init__(self, url: str, username: str, password: str, timeout: float = 10, *, timezone: str = "UTC",
                 password_env: str = "", clock: Clock = SYSTEM) -> None:
        url = (url or "").strip()
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise CalendarUnavailable(f"The calendar address {url!r} is not an http(s) URL: write the address of the "
                                      "calendar collection, e.g. https://cloud.example.com/remote.php/dav/calendars/"
                                      "ana/citas/.")
        self.url = url.rstrip("/") + "/"
        self.public_url = _public(self.url)
        self.zone = ZoneInfo(timezone)
        self.clock = clock
        self._password_env, self._timeout = password_env, timeout
        self._client = caldav.DAVClient(url=self.url, username=username or None,
                                        password=password if username else None, timeout=timeout)
        self._status = 0  # of the last HTTP answer: caldav's AuthorizationError does not say 401 or 403
        self._client.session.hooks["response"].append(self._saw)
        self._display: str | None = None
        self.writable = True

    # -- reading -------------------------------------------------------------------------------------------------
    def verify(self) -> str:
        """The collection's display name, once it answered as a calendar collection (else CalendarUnavailable)."""
        if self._display is not None:
            return self._display
        found = self._request("PROPFIND", self.url, _PROPFIND, {**_XML, "Depth": "0"})
        if found.status != 207 or found.tree is None:
            raise self._failed("read", found)
        if found.tree.find(f".//{_DAV}resourcetype/{_CAL}calendar") is None:
            raise CalendarUnavailable(f"The address {self.public_url} answers, but it is not a calendar (it is a "
                                      "folder or an account): write the address of the calendar collection itself, "
                                      "as the calendar app shows it (it usually ends with the calendar's name).")
        privileges = found.tree.find(f".//{_DAV}current-user-privilege-set")
        if privileges is not None and len(privileges):
            names = {element.tag for element in privileges.iter() if element.tag.startswith(_DAV)}
            self.writable = bool(names & {f"{_DAV}write", f"{_DAV}write-content", f"{_DAV}all"})
        name = found.tree.findtext(f".//{_DAV}displayname") or ""
        self._display = name.strip() or urlsplit(self.url).path.rstrip("/").rsplit("/", 1)[-1]
        return self._display

    def busy(self, start: datetime, end: datetime, ignore: Collection[str] = ()) -> list[Interval]:
        """Every busy interval of the calendar overlapping [start, end), sorted; events whose UID is in ``ignore``
        (a booking being moved) are left out."""
        window = Interval(start, end)
        self.verify()
        query = _QUERY.format(start=_stamp(window.start - _MARGIN), end=_stamp(window.end + _MARGIN))
        found = self._request("REPORT", self.url, query, {**_XML, "Depth": "1"})
        if found.status != 207:
            raise self._failed("read", found)
        try:
            results = _calendar_data(found.tree)
        except ValueError as exc:
            raise self._unreadable("its answer", exc) from exc
        spans: list[Interval] = []  # two events at one time stay two (a caller may take its own one out)
        for href, text in results:
            spans.extend(span for span in self._spans(href, text, window, ignore) if span.overlaps(window))
        return sorted(spans)

    def _spans(self, href: str, text: str, window: Interval, ignore: Collection[str]) -> Iterator[Interval]:
        try:
            calendar = icalendar.Calendar.from_ical(text)
            occurrences = recurring_ical_events.of(calendar, components=["VEVENT"]).between(
                window.start - _MARGIN, window.end + _MARGIN)
            for event in occurrences:
                if (str(event.get("UID", "")) in ignore or str(event.get("TRANSP", "")).upper() == "TRANSPARENT"
                        or str(event.get("STATUS", "")).upper() == "CANCELLED"):
                    continue
                yield self._span(event)
        except (ValueError, KeyError, TypeError) as exc:
            raise self._unreadable(href, exc) from exc

    def _span(self, event: icalendar.Event) -> Interval:
        """An event occurrence as UTC time: dates are whole local days, floating times are local wall times, an
        event without an end is the moment it starts (RFC 4791: it still collides with a slot around it)."""
        first = event["DTSTART"].dt
        last = event["DTEND"].dt if "DTEND" in event else None
        if last is None and "DURATION" in event:
            last = first + event["DURATION"].dt
        start = self._moment(first)
        end = self._moment(last) if last is not None else None
        if end is None or end <= start:
            end = self._moment(first + timedelta(days=1)) if not isinstance(first, datetime) else \
                start + timedelta(seconds=1)
        return Interval(start, end)

    def _first_span(self, href: str, text: str) -> Interval:
        """The time of an event resource as it is written (its first VEVENT, not expanded)."""
        try:
            return self._span(next(iter(icalendar.Calendar.from_ical(text).walk("VEVENT"))))
        except (ValueError, KeyError, TypeError, StopIteration) as exc:
            raise self._unreadable(_public(href), exc) from exc

    def _moment(self, value: date | datetime) -> datetime:
        if not isinstance(value, datetime):
            return datetime.combine(value, time(0), tzinfo=self.zone)
        return value.replace(tzinfo=self.zone) if value.tzinfo is None else value

    # -- writing -------------------------------------------------------------------------------------------------
    def create(self, uid: str, slot: Interval, summary: str, description: str) -> str:
        """PUT the event at ``<collection>/<uid>.ics`` only if nothing is there (``If-None-Match: *``); its ETag."""
        return self._put(uid, slot, summary, description, {"If-None-Match": "*"},
                         "the calendar already holds an event for this booking (written by another client first)")

    def update(self, uid: str, slot: Interval, summary: str, description: str, etag: str) -> str:
        """PUT the event only if it is still the version we read (``If-Match``); its new ETag. A booking with no
        event in this calendar yet (``etag`` empty: made before the calendar was connected) gets one created."""
        if not etag:
            return self.create(uid, slot, summary, description)
        return self._put(uid, slot, summary, description, {"If-Match": etag},
                         "the booking's calendar event was changed or removed by someone else since it was read")

    def delete(self, uid: str, etag: str) -> None:
        """DELETE the event only if it is still the version we read; already gone is fine, nothing written here
        (``etag`` empty) is nothing to delete. Changed by someone else: SlotTaken with its time as it is now."""
        if not etag:
            return
        self.verify()
        href = self._href(uid)
        gone = self._request("DELETE", href, "", {"If-Match": etag})
        if gone.status in (200, 202, 204, 404):
            return
        if gone.status != 412:
            raise self._failed("written", gone)
        now = self._request("GET", href)
        if now.status == 404:
            return
        if now.status != 200:
            raise self._failed("read", now)
        slot = self._first_span(href, now.raw)
        raise SlotTaken(slot, [], f"The calendar event {_public(href)} was changed in the calendar since it was "
                                  f"written (it is now at {iso(slot.start)}), so it was not deleted: staff edits are "
                                  "never overwritten; remove it in the calendar app if it should go.")

    def _put(self, uid: str, slot: Interval, summary: str, description: str, condition: dict, conflict: str) -> str:
        self.verify()
        if not self.writable:
            raise CalendarUnavailable(f"The calendar at {self.public_url} can be read but not written with this "
                                      "user: give the user write access to it in the calendar app, or connect "
                                      "another calendar.")
        href = self._href(uid)
        body = self.event(uid, slot, summary, description)
        wrote = self._request("PUT", href, body, {**_ICS, **condition})
        if wrote.status == 409 and f"{_CAL}no-uid-conflict" in _preconditions(wrote.raw):
            conflict = "the calendar already holds an event with this booking's UID at another address"
        elif wrote.status != 412:
            conflict = ""
        if conflict:
            raise SlotTaken(slot, [], f"The time {iso(slot.start)} was not written to the calendar: {conflict}; "
                                      "nothing was overwritten. Read the free times again.")
        if wrote.status not in (200, 201, 204):
            raise self._failed("written", wrote)
        return wrote.headers.get("ETag") or self._etag(href)

    def _etag(self, href: str) -> str:
        """The ETag of what we just wrote, for servers that do not send it with the PUT."""
        got = self._request("GET", href)
        if got.status == 200 and got.headers.get("ETag"):
            return got.headers["ETag"]
        found = self._request("PROPFIND", href, _GETETAG, {**_XML, "Depth": "0"})
        etag = found.tree.findtext(f".//{_DAV}getetag") if found.status == 207 and found.tree is not None else None
        if not etag:
            raise CalendarUnavailable(f"The calendar at {self.public_url} stored the booking's event "
                                      f"({_public(href)}) but gives no ETag for it, so later changes could overwrite "
                                      "staff edits: use a CalDAV server that sends ETags (every common one does).")
        return etag

    def event(self, uid: str, slot: Interval, summary: str, description: str) -> str:
        """The iCalendar text we store: one VEVENT in UTC, busy (OPAQUE), confirmed."""
        calendar = icalendar.Calendar()
        calendar.add("prodid", PRODID)
        calendar.add("version", "2.0")
        event = icalendar.Event()
        event.add("uid", uid)
        event.add("dtstamp", self.clock.now().astimezone(timezone.utc).replace(microsecond=0))
        event.add("dtstart", slot.start)
        event.add("dtend", slot.end)
        event.add("summary", summary)
        if description:
            event.add("description", description)
        event.add("transp", "OPAQUE")
        event.add("status", "CONFIRMED")
        calendar.add_component(event)
        return calendar.to_ical().decode("utf-8")

    def _href(self, uid: str) -> str:
        if not uid or not uid.strip():
            raise ValueError("a calendar event needs a uid (the booking's id)")
        return f"{self.url}{quote(uid.strip(), safe='')}.ics"

    # -- the wire ------------------------------------------------------------------------------------------------
    def _saw(self, response: requests.Response, *args, **kwargs) -> None:
        self._status = response.status_code

    def _request(self, method: str, url: str, body: str = "", headers: dict | None = None):
        self._status = 0
        try:
            return self._client.request(url, method, body, headers)
        except dav_error.AuthorizationError as exc:
            raise self._denied(self._status if self._status in (401, 403) else 401, exc.reason) from exc
        except NotImplementedError as exc:  # caldav: the server offers no login it can do (basic, digest, bearer)
            raise CalendarUnavailable(f"The calendar at {self.public_url} asks for a kind of login this app cannot "
                                      "do: connect with a user and password (basic or digest login), e.g. an app "
                                      "password made for this calendar.") from exc
        except (dav_error.DAVError, requests.exceptions.RequestException, OSError) as exc:  # refused, DNS, timeout, TLS
            raise CalendarUnavailable(f"The calendar at {self.public_url} could not be reached ({self._why(exc)}): "
                                      "check the address and that the server is up; no times are offered until it "
                                      "answers.") from exc
        except etree.LxmlError as exc:
            raise self._unreadable("its answer", exc) from exc

    def _why(self, exc: Exception) -> str:
        """A network failure in a few words people can act on (the library's text names pools and objects)."""
        text = str(exc).lower()
        kind = type(exc).__name__.lower()
        if isinstance(exc, requests.exceptions.Timeout) or "timed out" in text or "timeout" in kind:
            return f"no answer within {self._timeout:g} second{'' if self._timeout == 1 else 's'}"
        if isinstance(exc, requests.exceptions.SSLError) or "certificate" in text or "ssl" in kind:
            return "its TLS certificate was not accepted"
        if "refused" in text:
            return "the connection was refused"
        if "resolve" in text or "name or service not known" in text or "nodename nor servname" in text:
            return f"the host name {urlsplit(self.url).hostname!r} could not be found"
        return str(exc).split(" (Caused by ")[0][:200] or type(exc).__name__

    def _denied(self, status: int, reason: str) -> CalendarUnavailable:
        variable = f" ({self._password_env})" if self._password_env else ""
        what = "Unauthorized" if status == 401 else "Forbidden"
        return CalendarUnavailable(f"The calendar at {self.public_url} could not be read ({status} {what}): check "
                                   f"the user and the password variable{variable} of the calendar connection, and "
                                   f"that this user may use this calendar. The server said: {reason}.")

    def _failed(self, doing: str, response) -> CalendarUnavailable:
        status = response.status
        if status in (401, 403):
            return self._denied(status, response.reason or "")
        if status == 404:
            return CalendarUnavailable(f"There is no calendar at {self.public_url} (404 Not Found): check the "
                                       "address; it must be the calendar collection itself, as the calendar app "
                                       "shows it.")
        said = f"{status} {response.reason}".strip()
        return CalendarUnavailable(f"The calendar at {self.public_url} could not be {doing} ({said}): check the "
                                   "calendar server; no times are offered until it answers.")

    def _unreadable(self, where: str, exc: Exception) -> CalendarUnavailable:
        return CalendarUnavailable(f"The calendar at {self.public_url} sent something that could not be read "
                                   f"({where}: {exc}): fix or remove that event in the calendar app; no times are "
                                   "offered until the calendar can be read.")


def check(url: str, username: str, password: str, timeout: float = 10, *, timezone: str = "UTC",
          password_env: str = "", clock: Clock = SYSTEM) -> str:
    """What the admin's "Test connection" shows: the calendar answers, is a calendar, can be read (the coming 7
    days) and whether it can be written; CalendarUnavailable (the message for people) when not."""
    calendar = CalDavCalendar(url, username, password, timeout, timezone=timezone, password_env=password_env,
                              clock=clock)
    name = calendar.verify()
    now = clock.now()
    count = len(calendar.busy(now, now + timedelta(days=7)))
    busy = f"{count} busy time{'' if count == 1 else 's'} in the next 7 days"
    if not calendar.writable:
        return (f"Connected to the calendar “{name}” at {calendar.public_url}: it can be read ({busy}) but this user "
                "may not write to it, so bookings cannot be added: give the user write access.")
    return (f"Connected to the calendar “{name}” at {calendar.public_url}: it can be read ({busy}) and written; "
            "bookings will be added to it.")
