"""The campaign console, used as a person would: a real headless Chromium (Debian's `chromium`,
driven through Debian's `chromium-driver` by Selenium) against `$PUSHFLEET_BIN demo --serve`.

The tests run in order on one server and one browser tab: sign in, the overview, compose a tag
campaign (estimate, payload size, a field error), send it and watch it reach 100%, the report
and its export, a test send, a device lookup with tag edits, a scheduled campaign cancelled, the
dead letters, tokens uploaded from a file, a recall and an overwrite, an area campaign (and an
area out of range), a device's location recorded and forgotten, and the accessibility basics
(labels, keyboard, contrast). What the page shows is checked against the API's own answers.

Each page's screenshot is written to $PUSHFLEET_CONSOLE_SCREENSHOTS (default docs/console/, the
ones the README shows).
"""

import csv
import datetime
import decimal
import json
import os
import pathlib
import sys
import tempfile
import time

import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "support"))
import pushfleet_demo  # noqa: E402

# Selenium is given chromium-driver's path: its driver manager must never download anything.
os.environ.setdefault("SE_OFFLINE", "true")
SCREENSHOTS = pathlib.Path(os.environ.get("PUSHFLEET_CONSOLE_SCREENSHOTS", ROOT / "docs" / "console"))
CHROMIUM = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER_BIN", "/usr/bin/chromedriver")
WAIT = 30
DEVICES = 200


@pytest.fixture(scope="module")
def server():
    with pushfleet_demo.serving(devices=DEVICES) as running:
        yield running


@pytest.fixture(scope="module")
def downloads():
    with tempfile.TemporaryDirectory() as directory:
        yield pathlib.Path(directory)


@pytest.fixture(scope="module")
def browser(server, downloads):
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(path):
            pytest.fail(f"{path} is missing: ./scripts/ensure-deps.sh installs Debian's chromium and chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000",
                     "--force-prefers-reduced-motion"):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads), "download.prompt_for_download": False})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(WAIT)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def state():
    """What one test leaves for the next (the campaign it sent)."""
    return {}


# ---- helpers --------------------------------------------------------------------------------


def api(server, method, path, body=None):
    status, _, answer = pushfleet_demo.request(server, method, path, body, key=server.key)
    return status, answer


def until(browser, condition, message, timeout=WAIT):
    # The console re-renders a view when its data changes: an element found by one poll can be
    # replaced before it is read. That poll reads "not yet"; the next one finds the new element.
    try:
        return WebDriverWait(browser, timeout, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda _: condition()
        )
    except TimeoutException:
        pytest.fail(f"{message} (within {timeout} s); page: {browser.current_url}\n" + text(browser, "main")[:3000].replace("\n", " | "))


def text(browser, element_id):
    return browser.find_element(By.ID, element_id).text


def fill(browser, element_id, value):
    field = browser.find_element(By.ID, element_id)
    field.clear()
    field.send_keys(value)


def shot(browser, name):
    browser.save_screenshot(str(SCREENSHOTS / f"{name}.png"))


def go(browser, server, fragment):
    browser.get(server.console + fragment)


def figure(browser, element_id):
    """A figure the page shows (`1,234` or `1,234 (50.0%)`) as an int."""
    return int(text(browser, element_id).split(" ")[0].replace(",", ""))


def severe_console_errors(browser):
    return [entry["message"] for entry in browser.get_log("browser")
            if entry["level"] == "SEVERE" and "Failed to load resource" not in entry["message"]]


# ---- the tests, in the order a person goes ---------------------------------------------------


def test_sign_in_refuses_a_wrong_key_then_opens_the_overview(server, browser):
    browser.get(server.url + "/console")
    until(browser, lambda: browser.current_url.startswith(server.console), "/console leads to /console/")
    until(browser, lambda: browser.find_element(By.ID, "page-signin").is_displayed(), "the sign-in page shows")
    fill(browser, "signin-app", server.app)
    fill(browser, "signin-key", "pfk_not-a-key")
    browser.find_element(By.ID, "signin-submit").click()
    until(browser, lambda: "not one of app" in text(browser, "signin-error"), "a wrong key is refused with the API's words")
    assert browser.execute_script("return sessionStorage.getItem('pushfleet.key')") is None

    fill(browser, "signin-key", server.key)
    browser.find_element(By.ID, "signin-key").send_keys(Keys.ENTER)
    until(browser, lambda: browser.find_element(By.ID, "page-overview").is_displayed(), "the overview opens after signing in")
    status, devices = api(server, "GET", f"/v1/apps/{server.app}/devices")
    assert status == 200
    until(browser, lambda: browser.find_elements(By.ID, "ov-sandbox") and figure(browser, "ov-sandbox") == devices["sandbox"],
          "the overview shows the API's sandbox device count")
    until(browser, lambda: text(browser, "ov-ready") == "ready", "the fleet reads ready")
    # The demo runs no gateway: nothing is online, and no gateway counts.
    status, online = api(server, "GET", f"/v1/apps/{server.app}/online")
    assert status == 200 and online == {"devices": 0, "gateways": 0}, online
    assert text(browser, "ov-online") == "0 on 0 gateway(s)"
    status, tags = api(server, "GET", f"/v1/apps/{server.app}/tags")
    assert "sports" in text(browser, "ov-tags") and f"{tags['tags']['sports']:,}" in text(browser, "ov-tags")
    status, jobs = api(server, "GET", f"/v1/apps/{server.app}/jobs")
    assert jobs["jobs"], "the demo's campaigns are listed by the API"
    for entry in jobs["jobs"]:
        assert entry["status"]["job"] in text(browser, "ov-jobs")
    # The key is in the tab's session storage and nowhere in the page's address.
    assert browser.execute_script("return sessionStorage.getItem('pushfleet.key')") == server.key
    assert server.key not in browser.current_url
    shot(browser, "overview")


def test_compose_a_tag_campaign_with_estimate_size_and_a_field_error(server, browser, state):
    go(browser, server, "#/compose")
    until(browser, lambda: browser.find_element(By.ID, "page-compose").is_displayed(), "the compose page opens")
    browser.find_element(By.CSS_SELECTOR, 'input[name="audience-kind"][value="tags"]').click()
    fill(browser, "aud-tags-all", "sports")
    _, tags = api(server, "GET", f"/v1/apps/{server.app}/tags")
    sports = tags["tags"]["sports"]
    _, estimate = api(server, "POST", f"/v1/apps/{server.app}/audience/estimate",
                      {"environment": "sandbox", "audience": {"tags": {"all": ["sports"]}}})
    expected = f"{'' if estimate['exact'] else 'at most '}{estimate['devices']:,} devices in sandbox"
    assert estimate["devices"] == sports
    until(browser, lambda: text(browser, "estimate") == expected, f"the estimate is the API's: {expected}")

    fill(browser, "c-name", "Match day kick-off")
    fill(browser, "c-title", "Kick-off")
    fill(browser, "c-body", "The match starts in 10 minutes")
    fill(browser, "c-custom", '{"match": 42}')
    # Each device's badge goes up by one, kept by the server.
    fill(browser, "c-badge", "1")
    Select(browser.find_element(By.ID, "c-badge-mode")).select_by_value("increment")
    _, check = api(server, "POST", f"/v1/apps/{server.app}/push/check", {
        "environment": "sandbox", "audience": {"tags": {"all": ["sports"]}},
        "notification": {"match": 42, "aps": {"alert": {"title": "Kick-off", "body": "The match starts in 10 minutes"},
                                              "badge": {"increment": 1}}},
        "headers": {"push-type": "alert"}})
    until(browser, lambda: text(browser, "c-size") == f"{check['payload-bytes']:,} of 4,096 bytes (alert)",
          "the payload size against the alert limit, as the API measures it")
    assert '"match": 42' in text(browser, "c-preview") and '"pushfleet"' in text(browser, "c-preview")
    assert '"increment": 1' in text(browser, "c-preview")

    fill(browser, "c-collapse-id", "x" * 65)
    until(browser, lambda: text(browser, "c-error").startswith("headers.collapse-id:"), "a 65-byte collapse id is named as the API names it")
    assert browser.find_element(By.ID, "c-collapse-id").get_attribute("aria-invalid") == "true"
    shot(browser, "compose-error")
    browser.find_element(By.ID, "c-collapse-id").clear()
    until(browser, lambda: text(browser, "c-error") == "", "the error goes once the field is fixed")
    assert browser.find_element(By.ID, "c-collapse-id").get_attribute("aria-invalid") is None

    # A throttle keeps the campaign running long enough to be watched, paused and resumed.
    fill(browser, "c-rate", "5")
    until(browser, lambda: text(browser, "c-error") == "" and "bytes" in text(browser, "c-size"), "the job is valid")
    shot(browser, "compose")
    state["sports"] = sports


def test_send_it_pause_resume_and_watch_the_live_page_reach_100_percent(server, browser, state):
    browser.find_element(By.ID, "c-send").click()
    until(browser, lambda: "#/jobs/" in browser.current_url, "sending opens the campaign's live page")
    job = browser.current_url.split("#/jobs/")[1]
    state["job"] = job
    until(browser, lambda: text(browser, "job-heading") == "Match day kick-off" and text(browser, "job-id") == f"Campaign {job}",
          "the live page is headed by the campaign's name, its id beneath")
    _, named = api(server, "GET", f"/v1/apps/{server.app}/jobs/{job}")
    assert named["name"] == "Match day kick-off"
    # At 5 notifications/s the campaign takes about 13 s: pause it once it is under way.
    until(browser, lambda: text(browser, "job-percent") not in ("0%", "100%"), "the progress moves")
    browser.find_element(By.ID, "job-pause").click()
    until(browser, lambda: "paused" in text(browser, "job-state"), "pausing turns it paused")
    assert "paused in the console" in text(browser, "job-stopped")
    _, paused = api(server, "GET", f"/v1/apps/{server.app}/jobs/{job}")
    assert paused["state"] == "paused" and paused["accepted"] < paused["targeted"]
    assert browser.find_element(By.ID, "job-resume").is_enabled() and not browser.find_element(By.ID, "job-pause").is_enabled()
    shot(browser, "live")

    browser.find_element(By.ID, "job-resume").click()
    until(browser, lambda: text(browser, "job-percent") == "100%" and "complete" in text(browser, "job-state"),
          "after resuming, the live page reaches 100% and complete", timeout=120)
    _, status = api(server, "GET", f"/v1/apps/{server.app}/jobs/{job}")
    assert status["state"] == "complete"
    assert status["targeted"] == state["sports"]
    until(browser, lambda: figure(browser, "job-accepted") == status["accepted"], "the page's accepted count is the API's")
    assert figure(browser, "job-failed") == status["failed"]
    assert status["accepted"] + status["failed"] == status["targeted"], "a pause and a resume send everything once"
    # The chart has a line, and the controls follow the state.
    until(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "#job-chart polyline.series"), "the chart draws its line")
    assert not browser.find_element(By.ID, "job-cancel").is_enabled()
    assert not browser.find_element(By.ID, "job-resume").is_enabled()
    until(browser, lambda: text(browser, "job-live") == "final figures", "the page stops following a finished job")
    shot(browser, "report")


def test_the_campaign_list_filters_and_the_report_exports(server, browser, state, downloads):
    go(browser, server, "#/jobs")
    until(browser, lambda: browser.find_element(By.ID, "page-jobs").is_displayed(), "the campaign list opens")
    Select(browser.find_element(By.ID, "jobs-state")).select_by_visible_text("complete")
    browser.find_element(By.ID, "jobs-apply").click()
    _, listed = api(server, "GET", f"/v1/apps/{server.app}/jobs?state=complete&limit=100")
    until(browser, lambda: state["job"] in text(browser, "jobs-table"), "the sent campaign is listed as complete")
    rows = browser.find_elements(By.CSS_SELECTOR, "#jobs-table tbody tr")
    assert len(rows) == len(listed["jobs"])
    assert all("complete" in row.text for row in rows)
    Select(browser.find_element(By.ID, "jobs-state")).select_by_visible_text("cancelled")
    browser.find_element(By.ID, "jobs-apply").click()
    until(browser, lambda: state["job"] not in text(browser, "jobs-table"), "a state filter leaves the complete campaign out")
    Select(browser.find_element(By.ID, "jobs-state")).select_by_visible_text("any")
    browser.find_element(By.ID, "jobs-apply").click()
    until(browser, lambda: state["job"] in text(browser, "jobs-table"), "the campaign is listed again")
    shot(browser, "campaigns")

    browser.find_element(By.LINK_TEXT, "Match day kick-off").click()
    until(browser, lambda: text(browser, "job-percent") == "100%", "the report opens from the list")
    _, status = api(server, "GET", f"/v1/apps/{server.app}/jobs/{state['job']}")
    for reason, count in status["failed-by-reason"].items():
        assert reason in text(browser, "job-reasons") and f"{count:,}" in text(browser, "job-reasons")
    browser.find_element(By.ID, "job-export-csv").click()
    exported = downloads / f"{state['job']}.csv"
    until(browser, lambda: downloaded(exported), "the CSV export is downloaded")
    content = exported.read_text(encoding="utf-8")
    rows = dict(csv.reader(content.splitlines()))
    assert rows.get("job") == state["job"] and int(rows["accepted"]) == status["accepted"], content
    browser.find_element(By.ID, "job-export-json").click()
    exported = downloads / f"{state['job']}.json"
    until(browser, lambda: downloaded(exported), "the JSON export is downloaded")
    assert json.loads(exported.read_text(encoding="utf-8"))["job"] == state["job"]


def downloaded(path):
    """Whether Chromium has finished downloading `path`. It creates the file empty when a download
    starts, writes `<name>.crdownload` beside it and renames that over it at the end (seen on
    Debian's chromium, 2026-12-05): the file existing is not enough."""
    return path.exists() and path.stat().st_size > 0 and not path.with_name(path.name + ".crdownload").exists()


def to_fixed(value, digits):
    """JavaScript's `value.toFixed(digits)`: the exact binary value rounded half up (25.25, exactly a
    double, is 25.3), where Python's format rounds a tie to even (25.2)."""
    return str(decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-digits), rounding=decimal.ROUND_HALF_UP))


def test_to_fixed_rounds_as_javascript_does():
    assert to_fixed(100 * 0.2525, 1) == "25.3" and f"{100 * 0.2525:.1f}" == "25.2"
    assert to_fixed(1.005, 2) == "1.00", "1.005 is a little less than 1.005 as a double"
    assert to_fixed(0.0, 1) == "0.0" and to_fixed(100.0, 1) == "100.0"


def test_the_overview_shows_when_devices_read(server, browser, state):
    # Receipts of the sports campaign (new devices of it), counted into this hour of the app's time zone.
    _, before = api(server, "GET", f"/v1/apps/{server.app}/stats/hours?days=28")
    for index, event in enumerate(["delivered", "delivered", "delivered", "opened"]):
        token = f"{index % 3 + 1:02x}" * 32
        status, _ = api(server, "POST", f"/v1/apps/{server.app}/receipts", {"job": state["job"], "token": token, "event": event})
        assert status == 200
    status, stats = api(server, "GET", f"/v1/apps/{server.app}/stats/hours?days=28")
    assert status == 200
    read = [cell for cell in stats["hours"] if cell["delivered"] > 0]
    assert sum(cell["delivered"] for cell in read) == sum(cell["delivered"] for cell in before["hours"]) + 3
    assert sum(cell["opened"] for cell in read) == sum(cell["opened"] for cell in before["hours"]) + 1
    assert sum(cell["sent"] for cell in stats["hours"]) > 0
    go(browser, server, "#/overview")
    until(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "#ov-heatmap rect"), "the overview draws the hour heatmap")
    cells = browser.find_elements(By.CSS_SELECTOR, "#ov-heatmap rect")
    assert len(cells) == 168
    weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    for cell in read:
        rect = browser.find_element(By.CSS_SELECTOR, f'#ov-heatmap rect[data-weekday="{cell["weekday"]}"][data-hour="{cell["hour"]}"]')
        expected = (f"{weekdays[cell['weekday'] - 1]} {cell['hour']}:00: {to_fixed(100 * cell['delivery-rate'], 1)}% of {cell['sent']:,} delivered, "
                    f"{cell['opened']:,} opened")
        assert rect.get_attribute("aria-label") == expected
    empty = [cell for cell in stats["hours"] if cell["sent"] == 0][0]
    rect = browser.find_element(By.CSS_SELECTOR, f'#ov-heatmap rect[data-weekday="{empty["weekday"]}"][data-hour="{empty["hour"]}"]')
    assert rect.get_attribute("aria-label").endswith("nothing sent")
    assert stats["time-zone"] in text(browser, "ov-hours-caption")
    best = stats["best"]
    if best:
        assert text(browser, "ov-best-hour").startswith(f"Best hour: {weekdays[best['weekday'] - 1]} {best['hour']}:00")
    else:
        assert "not yet known" in text(browser, "ov-best-hour")
    browser.execute_script("document.getElementById('ov-hours').scrollIntoView()")
    shot(browser, "hours")


def test_a_test_send_shows_what_apns_answered(server, browser):
    go(browser, server, "#/test")
    until(browser, lambda: browser.find_element(By.ID, "page-test").is_displayed(), "the test send page opens")
    _, user = api(server, "GET", f"/v1/apps/{server.app}/users/user-1")
    browser.find_element(By.CSS_SELECTOR, 'input[name="test-kind"][value="openid"]').click()
    fill(browser, "t-target", "user-1")
    browser.find_element(By.ID, "t-send").click()
    until(browser, lambda: "200 accepted" in text(browser, "t-results"), "APNs's 200 for the user's device is shown")
    assert user["token"] in text(browser, "t-results")
    shot(browser, "test-send")

    browser.find_element(By.CSS_SELECTOR, 'input[name="test-kind"][value="token"]').click()
    fill(browser, "t-target", "not-hex")
    browser.find_element(By.ID, "t-send").click()
    until(browser, lambda: text(browser, "t-error").startswith("audience.tokens"), "a malformed token is named as the API names it")


def test_look_a_device_up_and_edit_its_tags_and_binding(server, browser, state):
    # user-3's device is a sports device: the tag campaign reached it, and its app posts a receipt.
    _, user = api(server, "GET", f"/v1/apps/{server.app}/users/user-3")
    token = user["token"]
    status, _, _ = pushfleet_demo.request(
        server, "POST", f"/v1/apps/{server.app}/receipts", {"job": state["job"], "token": token, "event": "delivered"},
        key=server.device_key)
    assert status == 200
    go(browser, server, "#/devices")
    until(browser, lambda: browser.find_element(By.ID, "page-devices").is_displayed(), "the device page opens")
    browser.find_element(By.CSS_SELECTOR, 'input[name="dev-kind"][value="openid"]').click()
    fill(browser, "dev-query", "user-3")
    browser.find_element(By.ID, "dev-find").click()
    until(browser, lambda: browser.find_element(By.ID, "dev-card").is_displayed() and token in text(browser, "dev-token"),
          "looking up an openid shows its device")
    assert text(browser, "dev-environment") == user["environment"] and text(browser, "dev-openid") == "user-3"
    # When the device reads: the receipt above is in its hours.
    _, shown = api(server, "GET", f"/v1/apps/{server.app}/devices/{token}")
    total = sum(shown["receipt-hours"]["utc"])
    assert total >= 1, "the receipt posted above is counted into the device's hours"
    best = shown["receipt-hours"]["best-utc-hour"]
    expected = f"not known yet ({total} receipt" if best is None else f"{best:02d}:00–{(best + 1) % 24:02d}:00 UTC"
    assert text(browser, "dev-best-hour").startswith(expected), text(browser, "dev-best-hour")
    assert text(browser, "dev-time-zone") == "none given (the app's)"
    until(browser, lambda: state["job"] in text(browser, "dev-campaigns") and "delivered" in text(browser, "dev-campaigns"),
          "the campaign the device confirmed is listed")
    assert "Match day kick-off" in text(browser, "dev-campaigns"), "by its name, the id beneath"
    # The campaign counted the device's badge; the app (here the console) resets it.
    until(browser, lambda: text(browser, "dev-badge").startswith("1,"), "the badge the campaign counted shows")
    fill(browser, "dev-badge-set", "0")
    browser.find_element(By.ID, "dev-badge-btn").click()
    until(browser, lambda: text(browser, "dev-badge").startswith("0,"), "the badge set shows")
    assert api(server, "GET", f"/v1/apps/{server.app}/devices/{token}/badge")[1]["badge"] == 0

    fill(browser, "dev-tag-add", "vip")
    browser.find_element(By.ID, "dev-tag-add-btn").click()
    until(browser, lambda: "vip" in text(browser, "dev-tags"), "the added tag shows")
    _, tags = api(server, "GET", f"/v1/apps/{server.app}/devices/{token}/tags")
    assert "vip" in tags["tags"]
    shot(browser, "devices")
    browser.find_element(By.CSS_SELECTOR, 'button[aria-label="Remove tag vip"]').click()
    until(browser, lambda: "vip" not in text(browser, "dev-tags"), "the removed tag goes")
    _, tags = api(server, "GET", f"/v1/apps/{server.app}/devices/{token}/tags")
    assert "vip" not in tags["tags"]

    browser.find_element(By.ID, "dev-unbind").click()
    until(browser, lambda: browser.find_element(By.ID, "dev-unbind-confirm").is_displayed(), "unbinding asks to confirm")
    assert api(server, "GET", f"/v1/apps/{server.app}/devices/{token}")[0] == 200, "nothing is unbound before the confirmation"
    browser.find_element(By.ID, "dev-unbind-confirm").click()
    until(browser, lambda: not browser.find_element(By.ID, "dev-card").is_displayed(), "the unbound device goes from the page")
    assert api(server, "GET", f"/v1/apps/{server.app}/devices/{token}")[0] == 404

    fill(browser, "dev-bind-token", token)
    fill(browser, "dev-bind-openid", "user-3")
    fill(browser, "dev-bind-tags", "sports, vip")
    # A zone the time zone database does not name is refused as the API refuses it.
    fill(browser, "dev-bind-zone", "GMT+5")
    browser.find_element(By.ID, "dev-bind-btn").click()
    until(browser, lambda: text(browser, "dev-bind-result").startswith("time-zone:"), "a bad time zone is named")
    assert api(server, "GET", f"/v1/apps/{server.app}/devices/{token}")[0] == 404, "nothing is bound"
    fill(browser, "dev-bind-zone", "America/Chicago")
    browser.find_element(By.ID, "dev-bind-btn").click()
    until(browser, lambda: text(browser, "dev-bind-result") == "Bound.", "binding it again is confirmed")
    assert text(browser, "dev-time-zone") == "America/Chicago", "the card shows the zone bound"
    status, device = api(server, "GET", f"/v1/apps/{server.app}/devices/{token}")
    assert status == 200 and device["openid"] == "user-3" and sorted(device["tags"]) == ["sports", "vip"]
    assert device["time-zone"] == "America/Chicago"


def test_compose_previews_the_lock_screen(server, browser):
    go(browser, server, "#/compose")
    until(browser, lambda: browser.find_element(By.ID, "page-compose").is_displayed(), "the compose page opens")
    fill(browser, "c-title", "Kick-off <b>now</b>")
    fill(browser, "c-subtitle", "Group A")
    fill(browser, "c-body", "goal " * 200)
    until(browser, lambda: text(browser, "c-lock-title") == "Kick-off <b>now</b>", "the title shows as typed, markup as text")
    assert text(browser, "c-lock-subtitle") == "Group A"
    assert text(browser, "c-lock-app").lower() == server.app.lower()
    assert text(browser, "c-lock-note") == ""
    body = browser.find_element(By.ID, "c-lock-body")
    assert body.text.startswith("goal goal")
    lines = browser.execute_script(
        "const body = arguments[0]; const line = parseFloat(getComputedStyle(body).lineHeight);"
        "return [Math.round(body.clientHeight / line), body.scrollHeight > body.clientHeight + 1];", body)
    assert lines == [4, True], "a long body is cut after four lines, as the lock screen cuts it"
    shot(browser, "compose-lock-screen")

    for field in ("c-title", "c-subtitle", "c-body"):
        browser.find_element(By.ID, field).clear()
    fill(browser, "c-sound", "default")
    until(browser, lambda: text(browser, "c-lock-note") == "Without an alert the device shows nothing (a sound or a badge at most).",
          "a payload without an alert shows no banner")
    assert not browser.find_element(By.ID, "c-lock-banner").is_displayed()
    Select(browser.find_element(By.ID, "c-push-type")).select_by_visible_text("background")
    until(browser, lambda: text(browser, "c-lock-note") == "A background push shows no banner on the lock screen.",
          "a background push shows no banner")
    Select(browser.find_element(By.ID, "c-push-type")).select_by_visible_text("alert")
    fill(browser, "c-sound", "")
    fill(browser, "c-body", "Back to normal")
    until(browser, lambda: text(browser, "c-lock-body") == "Back to normal" and text(browser, "c-lock-note") == "",
          "the banner comes back with the text")
    assert browser.find_element(By.ID, "c-lock-banner").is_displayed()
    assert severe_console_errors(browser) == []


def test_cancel_a_scheduled_campaign(server, browser):
    go(browser, server, "#/compose")
    until(browser, lambda: browser.find_element(By.ID, "page-compose").is_displayed(), "the compose page opens")
    browser.find_element(By.CSS_SELECTOR, 'input[name="audience-kind"][value="broadcast"]').click()
    fill(browser, "c-rate", "")
    fill(browser, "c-title", "Tomorrow's headlines")
    browser.find_element(By.CSS_SELECTOR, 'input[name="when"][value="later"]').click()
    later = datetime.datetime.now() + datetime.timedelta(days=1)
    # A datetime-local field takes the date and the time typed as the browser's locale shows them.
    browser.execute_script(
        "const field = document.getElementById('c-send-at'); field.value = arguments[0];"
        "field.dispatchEvent(new Event('input', {bubbles: true}));", later.strftime("%Y-%m-%dT%H:%M"))
    until(browser, lambda: text(browser, "c-error") == "" and "bytes" in text(browser, "c-size"), "the scheduled job is valid")
    browser.find_element(By.ID, "c-send").click()
    until(browser, lambda: "#/jobs/" in browser.current_url, "sending opens the campaign page")
    job = browser.current_url.split("#/jobs/")[1]
    until(browser, lambda: "scheduled" in text(browser, "job-state"), "the campaign reads scheduled")
    assert "scheduled for" in text(browser, "job-eta")
    browser.find_element(By.ID, "job-cancel").click()
    until(browser, lambda: "cancelled" in text(browser, "job-state"), "cancelling turns it cancelled")
    _, status = api(server, "GET", f"/v1/apps/{server.app}/jobs/{job}")
    assert status["state"] == "cancelled" and status["accepted"] == 0
    shot(browser, "cancelled")


def test_send_at_each_devices_local_time(server, browser):
    go(browser, server, "#/compose")
    until(browser, lambda: browser.find_element(By.ID, "page-compose").is_displayed(), "the compose page opens")
    browser.find_element(By.CSS_SELECTOR, 'input[name="audience-kind"][value="broadcast"]').click()
    fill(browser, "c-rate", "")
    fill(browser, "c-title", "Good morning")
    browser.find_element(By.CSS_SELECTOR, 'input[name="when"][value="local-time"]').click()
    until(browser, lambda: text(browser, "c-error").startswith("send-at.local-time"), "a local time is asked for")
    # Three hours from now in UTC, the demo app's zone (its devices gave none): all of them wait.
    later = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=3)).strftime("%H:%M")
    browser.execute_script(
        "const field = document.getElementById('c-local-time'); field.value = arguments[0];"
        "field.dispatchEvent(new Event('input', {bubbles: true}));", later)
    until(browser, lambda: text(browser, "c-error") == "" and "bytes" in text(browser, "c-size"), "the job is valid")
    browser.find_element(By.ID, "c-send").click()
    until(browser, lambda: "#/jobs/" in browser.current_url, "sending opens the campaign page")
    job = browser.current_url.split("#/jobs/")[1]

    def parked():
        _, status = api(server, "GET", f"/v1/apps/{server.app}/jobs/{job}")
        return status

    until(browser, lambda: parked()["send-times"] and parked()["expanded"] > 0
          and sum(t["scheduled"] for t in parked()["send-times"]) == parked()["expanded"], "every notification waits for its time")
    status = parked()
    # One slot for the devices in the app's zone; a device bound with a zone of its own (the
    # devices page's test) waits for its own.
    assert status["accepted"] == 0 and all(slot["released"] == 0 for slot in status["send-times"]), status
    # The expansion may still be under way (one shard task after another): the page's figure is
    # compared with the API's as both move.

    def waiting():
        return sum(slot["scheduled"] - slot["released"] for slot in parked()["send-times"])

    until(browser, lambda: text(browser, "job-waiting").startswith(f"{waiting():,} (next at")
          and text(browser, "job-waiting").startswith(f"{parked()['expanded']:,} ("),
          "the campaign page shows what waits for its time")
    shot(browser, "send-at-local-time")
    browser.find_element(By.ID, "job-cancel").click()
    until(browser, lambda: "cancelled" in text(browser, "job-state"), "cancelling turns it cancelled")


def send_online_campaign(browser, server, delivery, check_form=lambda: None):
    """Composes a broadcast named for `delivery` and sends it; answers its job id once complete.
    The form keeps what earlier tests left: what this changes it puts back at its end."""
    go(browser, server, "#/compose")
    until(browser, lambda: browser.find_element(By.ID, "page-compose").is_displayed(), "the compose page opens")
    kept = {field: browser.find_element(By.ID, field).get_attribute("value") for field in ("c-badge", "c-badge-mode", "c-name", "c-title")}
    when = browser.find_element(By.CSS_SELECTOR, 'input[name="when"]:checked').get_attribute("value")
    browser.find_element(By.CSS_SELECTOR, 'input[name="audience-kind"][value="broadcast"]').click()
    fill(browser, "c-rate", "")
    fill(browser, "c-title", "Live now")
    fill(browser, "c-name", f"Live now, {delivery}")
    fill(browser, "c-badge", "")  # a badge kept by the server is not for the online channel
    browser.find_element(By.CSS_SELECTOR, 'input[name="when"][value="now"]').click()
    Select(browser.find_element(By.ID, "c-delivery")).select_by_value(delivery)
    check_form()
    until(browser, lambda: text(browser, "c-error") == "" and "bytes" in text(browser, "c-size"), f"the {delivery} job is valid")
    browser.find_element(By.ID, "c-send").click()
    until(browser, lambda: "#/jobs/" in browser.current_url or text(browser, "c-error"), "sending opens the campaign page")
    assert "#/jobs/" in browser.current_url, text(browser, "c-error")
    job = browser.current_url.split("#/jobs/")[1]
    until(browser, lambda: "complete" in text(browser, "job-state"), "the campaign completes")
    until(browser, lambda: text(browser, "job-percent") == "100%", "the page reaches 100%")

    go(browser, server, "#/compose")
    until(browser, lambda: browser.find_element(By.ID, "page-compose").is_displayed(), "the compose page opens again")
    Select(browser.find_element(By.ID, "c-delivery")).select_by_value("apns")
    Select(browser.find_element(By.ID, "c-badge-mode")).select_by_value(kept["c-badge-mode"])
    for field in ("c-badge", "c-name", "c-title"):
        fill(browser, field, kept[field])
    browser.find_element(By.CSS_SELECTOR, f'input[name="when"][value="{when}"]').click()
    return job


def test_an_online_first_campaign_goes_through_apns_to_devices_not_connected(server, browser):
    """The demo runs no gateway: an online-first campaign finds no device online, so every
    notification goes through APNs, and the page counts them done as for any campaign."""
    def refuse_a_kept_badge():
        # A badge the server keeps counts APNs sends: the online channel refuses it, by its field.
        Select(browser.find_element(By.ID, "c-badge-mode")).select_by_value("increment")
        fill(browser, "c-badge", "1")
        until(browser, lambda: text(browser, "c-error").startswith("delivery: a badge kept by the server"), "a kept badge is refused")
        fill(browser, "c-badge", "")

    job = send_online_campaign(browser, server, "online-first", refuse_a_kept_badge)
    _, status = api(server, "GET", f"/v1/apps/{server.app}/jobs/{job}")
    assert status["delivery"] == "online-first", status
    assert status["online-sent"] == 0 and status["online"] == 0, status
    assert status["accepted"] + status["failed"] == status["targeted"] > 0, status
    go(browser, server, f"#/jobs/{job}")
    until(browser, lambda: text(browser, "job-online") == "0 of 0 handed to a gateway", "the page shows nothing acked online")
    assert figure(browser, "job-accepted") == status["accepted"]


def test_an_online_only_campaign_keeps_every_message_in_an_inbox_and_never_uses_apns(server, browser):
    """No device is connected: each one's message waits in its inbox, the campaign completes."""
    job = send_online_campaign(browser, server, "online-only")
    _, status = api(server, "GET", f"/v1/apps/{server.app}/jobs/{job}")
    assert status["delivery"] == "online-only", status
    assert status["inboxed"] == status["targeted"] > 0, status
    assert status["sent"] == 0 and status["accepted"] == 0, status
    go(browser, server, f"#/jobs/{job}")
    until(browser, lambda: text(browser, "job-inboxed") == f"{status['inboxed']:,}, 0 read since", "the page shows the inboxed messages")
    assert text(browser, "job-online") == "0 of 0 handed to a gateway"


def test_dead_letters_show_the_reasons(server, browser):
    _, letters = api(server, "GET", f"/v1/apps/{server.app}/dead-letters")
    assert letters["letters"], "the demo's malformed jobs are dead letters of the app"
    go(browser, server, "#/dead-letters")
    until(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "#dl-table tbody tr"), "the app's dead letters are listed")
    rows = browser.find_elements(By.CSS_SELECTOR, "#dl-table tbody tr")
    assert len(rows) == len(letters["letters"])
    for letter in letters["letters"]:
        assert letter["reason"] in text(browser, "dl-table")
    shot(browser, "dead-letters")
    fill(browser, "dl-job", "no-such-job")
    browser.find_element(By.ID, "dl-show").click()
    until(browser, lambda: text(browser, "dl-error").startswith("job:"), "an unknown job is named")


def test_tokens_uploaded_from_a_file_become_the_audience(server, browser, downloads):
    _, first = api(server, "GET", f"/v1/apps/{server.app}/users/user-2")
    _, second = api(server, "GET", f"/v1/apps/{server.app}/users/user-4")
    upload = downloads / "tokens.csv"
    upload.write_text(f"token\n{first['token']}\n{second['token']}\n", encoding="utf-8")
    go(browser, server, "#/compose")
    until(browser, lambda: browser.find_element(By.ID, "page-compose").is_displayed(), "the compose page opens")
    browser.find_element(By.CSS_SELECTOR, 'input[name="audience-kind"][value="tokens"]').click()
    browser.find_element(By.ID, "aud-tokens-file").send_keys(str(upload))
    until(browser, lambda: browser.find_element(By.ID, "aud-tokens").get_attribute("value") == f"{first['token']}\n{second['token']}",
          "the file's tokens fill the list (its header line left out)")
    _, estimate = api(server, "POST", f"/v1/apps/{server.app}/audience/estimate",
                      {"environment": "sandbox", "audience": {"tokens": [first["token"], second["token"]]}})
    assert estimate == {"audience": "tokens", "environment": "sandbox", "devices": 2, "exact": True}
    until(browser, lambda: text(browser, "estimate") == "2 devices in sandbox", "the estimate counts the uploaded tokens")
    # The badge still added per device (from the campaign composed before) needs registered devices.
    until(browser, lambda: text(browser, "c-error").startswith("notification.aps.badge:"),
          "a token list with a kept badge is refused as the API refuses it, the estimate shown all the same")
    Select(browser.find_element(By.ID, "c-badge-mode")).select_by_value("number")
    until(browser, lambda: text(browser, "c-error") == "", "a number for every device goes to a token list")


def test_recall_and_overwrite_ask_first_then_open_the_recall(server, browser, state):
    # Overwrite the sent campaign: the confirmation says what happens; keeping it publishes nothing.
    go(browser, server, f"#/jobs/{state['job']}")
    until(browser, lambda: text(browser, "job-percent") == "100%", "the campaign's page opens")
    assert text(browser, "job-recall-link") == "Not recalled"
    _, campaign = api(server, "GET", f"/v1/apps/{server.app}/jobs/{state['job']}")
    browser.find_element(By.ID, "job-overwrite").click()
    until(browser, lambda: browser.find_element(By.ID, "job-recall-confirm").is_displayed(), "overwrite asks first")
    assert f"{campaign['accepted']:,} devices" in text(browser, "job-recall-what")
    assert browser.find_element(By.ID, "job-overwrite-title").is_displayed()
    browser.find_element(By.ID, "job-recall-back").click()
    until(browser, lambda: not browser.find_element(By.ID, "job-recall-confirm").is_displayed(), "keeping it closes the question")
    _, kept = api(server, "GET", f"/v1/apps/{server.app}/jobs/{state['job']}")
    assert kept["recalled-by"] is None, "nothing is published without a confirmation"

    browser.find_element(By.ID, "job-overwrite").click()
    browser.find_element(By.ID, "job-recall-go").click()
    until(browser, lambda: "new title or body" in text(browser, "job-recall-error"), "an empty overwrite is refused in the page")
    fill(browser, "job-overwrite-title", "Kick-off moved")
    fill(browser, "job-overwrite-body", "The match starts at 21:00")
    shot(browser, "recall-confirm")
    browser.find_element(By.ID, "job-recall-go").click()
    until(browser, lambda: "#/jobs/" in browser.current_url and state["job"] not in browser.current_url, "the recall's page opens")
    recall = browser.current_url.split("#/jobs/")[1]
    until(browser, lambda: text(browser, "job-heading") == "Overwrite: Match day kick-off", "the recall is named after the campaign")
    until(browser, lambda: "complete" in text(browser, "job-state"), "the overwrite finishes", timeout=120)
    assert text(browser, "job-recall-link") == f"Recall of {state['job']} (overwrite)"
    assert not browser.find_element(By.ID, "job-recall").is_enabled(), "a recall is not recalled"
    _, status = api(server, "GET", f"/v1/apps/{server.app}/jobs/{recall}")
    assert status["recall-of"] == {"job": state["job"], "mode": "overwrite"}
    # user-3's device, unbound and bound again by the device test, has a new device id since: the
    # campaign's sent state cannot tell that it got the campaign.
    assert status["targeted"] == campaign["accepted"] - 1, "the overwrite goes to the devices that got the campaign"
    browser.find_element(By.LINK_TEXT, state["job"]).click()
    until(browser, lambda: text(browser, "job-recall-link") == f"Recalled by {recall} (overwrite)", "the campaign links its recall")
    assert not browser.find_element(By.ID, "job-overwrite").is_enabled(), "a campaign is recalled once"

    # Withdraw another campaign.
    tokens = [f"{n:064x}" for n in range(0xC0FFEE, 0xC0FFEE + 5)]
    _, published = api(server, "POST", f"/v1/apps/{server.app}/push", {
        "environment": "sandbox", "audience": {"tokens": tokens}, "notification": {"aps": {"alert": "Half-time quiz"}},
        "headers": {"push-type": "alert"}})
    go(browser, server, f"#/jobs/{published['job']}")
    until(browser, lambda: "complete" in text(browser, "job-state"), "the second campaign finishes")
    browser.find_element(By.ID, "job-recall").click()
    until(browser, lambda: "asked to remove it" in text(browser, "job-recall-what"), "recall says it withdraws")
    assert not browser.find_element(By.ID, "job-overwrite-title").is_displayed()
    browser.find_element(By.ID, "job-recall-go").click()
    until(browser, lambda: published["job"] not in browser.current_url, "the withdraw's page opens")
    until(browser, lambda: "complete" in text(browser, "job-state"), "the withdraw finishes", timeout=120)
    withdraw = browser.current_url.split("#/jobs/")[1]
    _, status = api(server, "GET", f"/v1/apps/{server.app}/jobs/{withdraw}")
    assert status["recall-of"] == {"job": published["job"], "mode": "withdraw"}
    assert status["accepted"] == len(tokens)


# ---- location audiences: an area on the compose page, a device's location on the device page ----

PARIS = {"lat": 48.8566, "lon": 2.3522, "radius-km": 10}


def signed_in(browser, server, fragment):
    """Opens `fragment`, signing in first when the tab has no key (these tests also run alone,
    with `-k`)."""
    go(browser, server, fragment)
    if browser.execute_script("return sessionStorage.getItem('pushfleet.key')") is None:
        until(browser, lambda: browser.find_element(By.ID, "page-signin").is_displayed(), "the sign-in page shows")
        fill(browser, "signin-app", server.app)
        fill(browser, "signin-key", server.key)
        browser.find_element(By.ID, "signin-submit").click()
    page = fragment.split("/")[1]
    until(browser, lambda: browser.find_element(By.ID, f"page-{page}").is_displayed(), f"the {page} page opens")


def choose_area(browser, lat, lon, radius):
    """The Area kind with its circle filled and no tags, for a plain alert sent now in sandbox."""
    browser.find_element(By.CSS_SELECTOR, 'input[name="audience-kind"][value="area"]').click()
    until(browser, lambda: browser.find_element(By.ID, "c-area-lat").is_displayed(), "the area's fields show")
    assert browser.find_element(By.ID, "aud-tags-all").is_displayed(), "an area may be narrowed by the tag fields"
    Select(browser.find_element(By.ID, "c-environment")).select_by_value("sandbox")
    Select(browser.find_element(By.ID, "c-push-type")).select_by_visible_text("alert")
    browser.find_element(By.CSS_SELECTOR, 'input[name="when"][value="now"]').click()
    for field in ("aud-tags-all", "aud-tags-any", "aud-tags-none", "c-custom", "c-badge", "c-rate", "c-collapse-id"):
        browser.find_element(By.ID, field).clear()
    fill(browser, "c-area-lat", lat)
    fill(browser, "c-area-lon", lon)
    fill(browser, "c-area-radius", radius)


def located_text(browser, location):
    """What the device page shows for a location the API answered: as the browser writes its
    numbers and its local time."""
    return browser.execute_script("return `${arguments[0]}, ${arguments[1]} until ${new Date(arguments[2]).toLocaleString()}`;",
                                  location["lat"], location["lon"], location["expires-at"])


def test_compose_an_area_campaign_to_the_devices_located_in_it(server, browser):
    # Five new sandbox devices: three located in Paris (two of them tagged riverside), one in
    # Lyon, one without a location.
    tokens = [f"{n:064x}" for n in range(0xA4EA00, 0xA4EA00 + 5)]
    places = [(48.8606, 2.3376), (48.8530, 2.3499), (48.8867, 2.3431), (45.7640, 4.8357), None]
    for index, token in enumerate(tokens):
        status, _ = api(server, "PUT", f"/v1/apps/{server.app}/devices/{token}",
                        {"environment": "sandbox", "tags": ["riverside"] if index < 2 else []})
        assert status == 200
    unregistered = f"{0xA4EAFF:064x}"
    status, _ = api(server, "PUT", f"/v1/apps/{server.app}/devices/{unregistered}/location", {"lat": 48.86, "lon": 2.35})
    assert status == 404, "an unregistered device has no location to record"
    for token, place in zip(tokens, places):
        if place is None:
            continue
        status, located = api(server, "PUT", f"/v1/apps/{server.app}/devices/{token}/location", {"lat": place[0], "lon": place[1]})
        assert status == 200 and located["token"] == token
        assert abs(located["lat"] - place[0]) < 0.02 and abs(located["lon"] - place[1]) < 0.03, "coarsened to about 1 km"
    _, estimate = api(server, "POST", f"/v1/apps/{server.app}/audience/estimate", {"environment": "sandbox", "audience": {"area": PARIS}})
    assert estimate["audience"] == "area" and estimate["devices"] == 3 and estimate["exact"] is False, estimate
    _, narrowed = api(server, "POST", f"/v1/apps/{server.app}/audience/estimate",
                      {"environment": "sandbox", "audience": {"area": PARIS, "tags": {"all": ["riverside"]}}})
    assert narrowed["devices"] == 2, narrowed

    signed_in(browser, server, "#/compose")
    choose_area(browser, "48.8566", "2.3522", "10")
    fill(browser, "c-name", "Paris by night")
    fill(browser, "c-title", "Tonight in Paris")
    fill(browser, "c-body", "Fireworks over the Seine at 22:00")
    until(browser, lambda: text(browser, "estimate") == "at most 3 devices in sandbox",
          "the estimate counts the devices located in the circle, as the API does")
    fill(browser, "aud-tags-all", "riverside")
    until(browser, lambda: text(browser, "estimate") == "at most 2 devices in sandbox", "a tag narrows the area's estimate")
    browser.find_element(By.ID, "aud-tags-all").clear()
    until(browser, lambda: text(browser, "estimate") == "at most 3 devices in sandbox", "without the tag the whole circle again")
    until(browser, lambda: text(browser, "c-error") == "" and "bytes" in text(browser, "c-size"), "the area job is valid")
    shot(browser, "compose-area")

    # What the console sends: the circle's numbers as JSON numbers.
    browser.execute_script("""
        window.sentJobs = [];
        const send = window.fetch;
        window.fetch = (path, init) => {
          if (init && init.method === "POST" && String(path).endsWith("/push")) window.sentJobs.push(JSON.parse(init.body));
          return send(path, init);
        };""")
    browser.find_element(By.ID, "c-send").click()
    until(browser, lambda: "#/jobs/" in browser.current_url, "sending opens the campaign's live page")
    job = browser.current_url.split("#/jobs/")[1]
    sent = browser.execute_script("return window.sentJobs")
    assert [body["audience"] for body in sent] == [{"area": PARIS}]
    until(browser, lambda: "complete" in text(browser, "job-state"), "the area campaign finishes", timeout=120)
    _, status = api(server, "GET", f"/v1/apps/{server.app}/jobs/{job}")
    assert status["name"] == "Paris by night" and status["state"] == "complete"
    # The API expanded the job as an area: the three devices located in Paris, not the app's
    # hundreds of sandbox devices, nor Lyon's or the one without a location.
    assert status["targeted"] == 3 and status["accepted"] + status["failed"] == 3, status
    until(browser, lambda: figure(browser, "job-targeted") == 3, "the page's targeted count is the API's")
    assert figure(browser, "job-accepted") == status["accepted"]


def test_an_area_out_of_range_is_named_as_the_api_names_it(server, browser):
    signed_in(browser, server, "#/compose")
    choose_area(browser, "95", "2.3522", "10")
    fill(browser, "c-title", "Nowhere")
    area = {"lat": 95, "lon": 2.3522, "radius-km": 10}
    status, refused = api(server, "POST", f"/v1/apps/{server.app}/push/check", {
        "environment": "sandbox", "audience": {"area": area},
        "notification": {"aps": {"alert": {"title": "Nowhere"}}}, "headers": {"push-type": "alert"}})
    assert status == 400 and refused["error"]["field"] == "audience.area.lat", refused
    expected = f"audience.area.lat: {refused['error']['message']}"
    until(browser, lambda: text(browser, "c-error") == expected, f"the API's error shows: {expected}")
    assert browser.find_element(By.ID, "c-area-lat").get_attribute("aria-invalid") == "true"
    assert browser.find_element(By.ID, "c-area-lon").get_attribute("aria-invalid") is None
    until(browser, lambda: text(browser, "estimate") == "unknown until the API accepts the audience",
          "a refused area has no estimate (not the previous audience's)")
    shot(browser, "compose-area-error")
    # Sending it anyway publishes nothing and shows the API's 400.
    _, before = api(server, "GET", f"/v1/apps/{server.app}/jobs?limit=100")
    browser.find_element(By.ID, "c-send").click()
    until(browser, lambda: text(browser, "c-error") == expected and browser.find_element(By.ID, "c-send").is_enabled(),
          "the publish is refused with the same error")
    assert "#/compose" in browser.current_url
    _, after = api(server, "GET", f"/v1/apps/{server.app}/jobs?limit=100")
    assert [entry["status"]["job"] for entry in after["jobs"]] == [entry["status"]["job"] for entry in before["jobs"]]

    # An empty radius is left out of the audience; the API says it is required.
    fill(browser, "c-area-lat", "48.8566")
    browser.find_element(By.ID, "c-area-radius").clear()
    until(browser, lambda: text(browser, "c-error").startswith("audience.area.radius-km:"), "a missing radius is named")
    assert browser.find_element(By.ID, "c-area-radius").get_attribute("aria-invalid") == "true"
    fill(browser, "c-area-radius", "10")
    until(browser, lambda: text(browser, "c-error") == "" and text(browser, "estimate").endswith("devices in sandbox"),
          "fixing the field clears the error and brings the estimate back")
    assert browser.find_element(By.ID, "c-area-lat").get_attribute("aria-invalid") is None


def test_the_device_page_shows_records_and_forgets_a_location(server, browser):
    _, user = api(server, "GET", f"/v1/apps/{server.app}/users/user-7")
    token = user["token"]
    path = f"/v1/apps/{server.app}/devices/{token}/location"
    status, tokyo = api(server, "PUT", path, {"lat": 35.6812, "lon": 139.7671})
    assert status == 200 and abs(tokyo["lat"] - 35.6812) < 0.02 and tokyo["expires-at"] > time.time() * 1000
    signed_in(browser, server, "#/devices")
    browser.find_element(By.CSS_SELECTOR, 'input[name="dev-kind"][value="openid"]').click()
    fill(browser, "dev-query", "user-7")
    browser.find_element(By.ID, "dev-find").click()
    # The list is rewritten in place (an earlier test may have left a device shown): read it whole.
    until(browser, lambda: browser.find_element(By.ID, "dev-card").is_displayed() and token in text(browser, "dev-result"),
          "looking up the openid shows its device")
    until(browser, lambda: text(browser, "dev-location") == located_text(browser, tokyo), "the location the API keeps shows")

    fill(browser, "dev-location-lat", "51.5074")
    fill(browser, "dev-location-lon", "-0.1278")
    browser.find_element(By.ID, "dev-location-btn").click()
    until(browser, lambda: text(browser, "dev-location").startswith("51.5"), "the recorded location shows")
    status, london = api(server, "GET", path)
    assert status == 200 and abs(london["lat"] - 51.5074) < 0.02 and abs(london["lon"] + 0.1278) < 0.03
    assert text(browser, "dev-location") == located_text(browser, london), "as the API keeps it (coarsened)"
    shot(browser, "devices-location")

    fill(browser, "dev-location-lat", "95")
    browser.find_element(By.ID, "dev-location-btn").click()
    until(browser, lambda: text(browser, "dev-error").startswith("lat:"), "an out-of-range latitude is named as the API names it")
    assert api(server, "GET", path)[1] == london, "a refused location changes nothing"

    browser.find_element(By.ID, "dev-location-forget").click()
    until(browser, lambda: text(browser, "dev-location") == "none", "the forgotten location reads none")
    assert text(browser, "dev-error") == ""
    assert api(server, "GET", path)[0] == 404
    status, again = api(server, "DELETE", path)
    assert status == 200 and again == {"token": token, "forgotten": False}


def test_every_control_has_a_label_and_text_keeps_its_contrast(server, browser):
    for page in ("overview", "compose", "test", "jobs", "devices", "dead-letters"):
        go(browser, server, f"#/{page}")
        until(browser, lambda: browser.find_element(By.ID, f"page-{page}").is_displayed(), f"{page} opens")
        unlabelled = browser.execute_script("""
            return [...document.querySelectorAll('input, select, textarea, button, meter, progress')]
              .filter((control) => control.offsetParent !== null)
              .filter((control) => !(control.labels && control.labels.length) && !control.getAttribute('aria-label')
                                   && !control.getAttribute('aria-labelledby') && !(control.tagName === 'BUTTON' && control.textContent.trim()))
              .map((control) => control.id || control.outerHTML.slice(0, 80));""")
        assert unlabelled == [], f"{page}: controls without a label"
        low = browser.execute_script(CONTRAST)
        assert low == [], f"{page}: text below 4.5:1 contrast"
    assert severe_console_errors(browser) == []


def test_the_console_is_usable_with_the_keyboard(server, browser):
    go(browser, server, "#/overview")
    until(browser, lambda: browser.find_element(By.ID, "page-overview").is_displayed(), "the overview opens")
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    focused = browser.switch_to.active_element
    # The first stop is the skip link, then the page links.
    if focused.get_attribute("id") == "main":
        focused.send_keys(Keys.SHIFT, Keys.TAB)
        focused = browser.switch_to.active_element
    # The overview's heading has the focus (every page's does when it opens): Tab goes through the
    # page's own links, one per campaign of the week, then wraps to the skip link and the page links.
    stops = []
    for _ in range(60):
        stops.append(focused.text or focused.get_attribute("id"))
        if focused.text == "Compose":
            break
        focused.send_keys(Keys.TAB)
        focused = browser.switch_to.active_element
    assert "Compose" in stops, stops
    focused.send_keys(Keys.ENTER)
    until(browser, lambda: browser.find_element(By.ID, "page-compose").is_displayed(), "Enter on a page link opens it")
    # The page's heading takes the focus, so a screen reader announces the page.
    assert browser.switch_to.active_element.get_attribute("id") == "compose-heading"


# Text whose colour against its (first opaque) background is below WCAG AA's 4.5:1.
CONTRAST = """
const channel = (value) => { value /= 255; return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4; };
const rgb = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
const luminance = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
const background = (element) => {
  for (let node = element; node; node = node.parentElement) {
    const colour = rgb(getComputedStyle(node).backgroundColor);
    if (colour.length >= 3 && (colour.length === 3 || colour[3] > 0.9)) return colour;
  }
  return [255, 255, 255];
};
const low = [];
for (const element of document.querySelectorAll('main *, header *')) {
  if (element.offsetParent === null) continue;
  const own = [...element.childNodes].some((node) => node.nodeType === 3 && node.textContent.trim());
  if (!own || element.closest('svg') || element.disabled) continue;
  const fore = luminance(rgb(getComputedStyle(element).color)), back = luminance(background(element));
  const ratio = (Math.max(fore, back) + 0.05) / (Math.min(fore, back) + 0.05);
  if (ratio < 4.5) low.push(`${element.tagName}#${element.id} '${element.textContent.trim().slice(0, 30)}' ${ratio.toFixed(2)}`);
}
return low;
"""
