def heater_schedule(temps, setpoint, band, min_hold):
    low = setpoint - band
    high = setpoint + band
    on = False
    held = min_hold
    switches = 0
    on_minutes = 0
    for temp in temps:
        if temp is not None and held >= min_hold:
            if not on and temp < low:
                on = True
                switches += 1
                held = 0
            elif on and temp > high:
                on = False
                switches += 1
                held = 0
        if on:
            on_minutes += 1
        held += 1
    return {
        "switches": switches,
        "on_minutes": on_minutes,
        "final": "on" if on else "off",
    }
