"""The Booking page's timeline: the coming days in the business's time zone, one row per day.

Each row shows the day's opening hours as a pale band and, over it, the bookings, the live holds (a visitor is
choosing: the slot is blocked until the hold is confirmed, released or expires) and the staff's blocks, each kind
in its own colour (the legend names them). The x axis is the local wall-clock time of day, so a row reads like a
diary page whatever the UTC offset of that day (summer time included: every offset comes from ``zoneinfo``).
"""
from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone

import plotly.graph_objects as go

from core.booking.schedule import Schedule

DAYS = 7
#: kind -> (legend name, colour); drawn in this order, over the opening hours ("calendar": busy time read from a
#: connected CalDAV calendar, drawn first, so the bookings written there show over it)
KINDS = {"calendar": ("Busy in the connected calendar", "#8d99ae"), "booking": ("Booking", "#1f77b4"),
         "hold": ("Hold (a visitor is choosing)", "#ff9f1c"), "block": ("Block (staff)", "#d62728")}
OPEN = ("Opening hours", "#e3f1e6")
_REF = date(2000, 1, 3)  # every row is drawn on this one reference day: the x axis is the time of day


def moment(value) -> datetime:
    """A row's time (a stored ISO string or a datetime) as an aware UTC datetime."""
    when = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)


def row_label(day: date, today: date, schedule: Schedule) -> str:
    """"Wed 02 Dec" (+ " · today", " · closed")."""
    label = day.strftime("%a %d %b")
    if day == today:
        label += " · today"
    if not schedule.ranges(day):
        label += " · closed"
    return label


def _wall(moment_: datetime, tz, day: date) -> datetime:
    """The local wall time of ``moment_`` on the reference day (the next day's midnight is 24:00)."""
    local = moment_.astimezone(tz).replace(tzinfo=None)
    return datetime.combine(_REF, time()) + (local - datetime.combine(day, time()))


def drawn_rows(rows: list[dict]) -> list[dict]:
    """What the timeline draws: confirmed bookings, live holds (held, not expired) and blocks; a cancelled booking or
    an ended hold frees its time and is not drawn."""
    keep = {"booking": {"confirmed"}, "hold": {"held"}}
    return [row for row in rows if row.get("kind") in KINDS and
            (row["kind"] not in keep or row.get("status") in keep[row["kind"]])]


def pieces(rows: list[dict], schedule: Schedule, start_day: date, days: int = DAYS) -> list[dict]:
    """The timeline rows ({kind, start_utc, end_utc, label, status}) cut into one piece per local day they touch:
    {kind, day, x0, x1, local, label, status}."""
    tz = schedule.zone
    out = []
    for row in rows:
        start, end = moment(row.get("start_utc") or row["start"]), moment(row.get("end_utc") or row["end"])
        for n in range(days):
            day = start_day + timedelta(days=n)
            opens = datetime.combine(day, time(), tzinfo=tz).astimezone(timezone.utc)
            closes = datetime.combine(day + timedelta(days=1), time(), tzinfo=tz).astimezone(timezone.utc)
            a, b = max(start, opens), min(end, closes)
            if a >= b:
                continue
            x0, x1 = _wall(a, tz, day), _wall(b, tz, day)
            if x1 <= x0:  # the autumn fold: wall times repeat, keep the real length
                x1 = x0 + (b - a)
            local = f"{a.astimezone(tz):%H:%M}–{b.astimezone(tz):%H:%M}" if b < closes else \
                f"{a.astimezone(tz):%H:%M}–24:00"
            out.append({"kind": row.get("kind", ""), "day": day, "x0": x0, "x1": x1, "local": local,
                        "label": str(row.get("label") or ""), "status": str(row.get("status") or "")})
    return out


def _span(schedule: Schedule, start_day: date, days: int, drawn: list[dict]) -> tuple[datetime, datetime]:
    """The hours shown: the opening hours and everything drawn, whole hours, at least 08:00-20:00."""
    low, high = datetime.combine(_REF, time(8)), datetime.combine(_REF, time(20))
    for n in range(days):
        for opens, closes in schedule.ranges(start_day + timedelta(days=n)):
            low, high = min(low, datetime.combine(_REF, opens)), max(high, datetime.combine(_REF, closes))
    for piece in drawn:
        low, high = min(low, piece["x0"]), max(high, piece["x1"])
    low = low.replace(minute=0, second=0, microsecond=0)
    if high.minute or high.second:
        high = high.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    return low, high


def _bars(name: str, colour: str, drawn: list[dict], labels: dict, width: float, hover: str, **extra) -> go.Bar:
    if not drawn:  # plotly's legend lists only traces with data: one bar the day before, outside the x range
        before = datetime.combine(_REF - timedelta(days=1), time())
        drawn = [{"day": next(iter(labels)), "x0": before, "x1": before + timedelta(hours=1), "local": "",
                  "label": "", "status": ""}]
        extra["hoverinfo"], hover = "skip", None
    return go.Bar(
        name=name, orientation="h", marker_color=colour, width=width, showlegend=True,
        y=[labels[p["day"]] for p in drawn], base=[p["x0"].isoformat() for p in drawn],
        x=[(p["x1"] - p["x0"]).total_seconds() * 1000 for p in drawn],
        customdata=[[p["local"], p["label"], p["status"]] for p in drawn], hovertemplate=hover, **extra)


def figure(rows: list[dict], schedule: Schedule, now: datetime, days: int = DAYS, calendar: bool = False) -> go.Figure:
    """The timeline of ``days`` local days from today: opening hours, then bookings, holds and blocks (and, with
    ``calendar``, the busy time of the connected calendar)."""
    tz = schedule.zone
    today = schedule.today(now)
    order = [today + timedelta(days=n) for n in range(days)]
    labels = {day: row_label(day, today, schedule) for day in order}
    drawn = pieces(drawn_rows(rows), schedule, today, days)
    hours = [{"day": day, "x0": datetime.combine(_REF, a), "x1": datetime.combine(_REF, b),
              "local": f"{a:%H:%M}–{b:%H:%M}", "label": "open", "status": ""}
             for day in order for a, b in schedule.ranges(day)]
    noon = datetime.combine(_REF, time(12))  # a closed day keeps its row: a bar of no width, so plotly draws the row
    hours += [{"day": day, "x0": noon, "x1": noon, "local": "closed", "label": "closed", "status": ""}
              for day in order if not schedule.ranges(day)]
    fig = go.Figure()
    fig.add_trace(_bars(OPEN[0], OPEN[1], hours, labels, 0.86, "%{y} · open %{customdata[0]}<extra></extra>",
                        marker_line_width=0))
    for kind, (name, colour) in KINDS.items():
        if kind == "calendar" and not calendar:
            continue
        mine = [p for p in drawn if p["kind"] == kind]
        fig.add_trace(_bars(name, colour, mine, labels, 0.56,
                            f"<b>{name}</b> · %{{y}} %{{customdata[0]}}<br>%{{customdata[1]}}"
                            "<br>%{customdata[2]}<extra></extra>", marker_line_width=0))
    here = _wall(now, tz, today)
    low, high = _span(schedule, today, days, drawn)
    if low <= here <= high:  # a mark on today's row (not at night, when the hours shown end before now)
        fig.add_trace(go.Scatter(name="Now", x=[here.isoformat()], y=[labels[today]], mode="markers",
                                 marker=dict(symbol="line-ns", size=26, line=dict(width=3, color="#222")),
                                 hovertemplate=f"now {now.astimezone(tz):%H:%M}<extra></extra>"))
    fig.update_xaxes(type="date", range=[low.isoformat(), high.isoformat()], tickformat="%H:%M", dtick=3600000,
                     showgrid=True, gridcolor="#eee", title=None)
    fig.update_yaxes(categoryorder="array", categoryarray=[labels[d] for d in order], autorange="reversed",
                     title=None)
    fig.update_layout(barmode="overlay", height=120 + 44 * days, margin=dict(l=0, r=0, t=30, b=0),
                      plot_bgcolor="white", bargap=0.1,
                      title=dict(text=f"Next {days} days · times in {schedule.timezone}", font=dict(size=14)),
                      legend=dict(orientation="h", yanchor="top", y=-0.12, xanchor="left", x=0, title=None))
    return fig
