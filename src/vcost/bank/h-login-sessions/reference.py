EVENTS = ("login", "action", "logout")


def session_minutes(lines, timeout):
    totals = {}
    sessions = {}  # user -> [login minute, last event minute]
    for line in lines:
        parts = line.split()
        if len(parts) != 3 or parts[2] not in EVENTS:
            continue
        clock, user, event = parts
        hours, minutes = clock.split(":")
        now = int(hours) * 60 + int(minutes)
        open_ = sessions.get(user)
        if open_ is not None and now - open_[1] > timeout:
            totals[user] += open_[1] - open_[0]
            del sessions[user]
            open_ = None
        if event == "login":
            if open_ is not None:
                totals[user] += open_[1] - open_[0]
            totals.setdefault(user, 0)
            sessions[user] = [now, now]
        elif open_ is not None and event == "logout":
            totals[user] += now - open_[0]
            del sessions[user]
        elif open_ is not None:
            open_[1] = now
    for user, (login, last) in sessions.items():
        totals[user] += last - login
    return totals
