"""aioapns as the peer client of the APNs benchmark: sends COUNT token-auth notifications to the
simulator and prints one JSON line {"sent", "ok", "seconds", "rate", "cpu_seconds"}.

aioapns has no host/port option: the sandbox protocol class's APNS_SERVER/APNS_PORT are pointed
at the simulator, and its SSL context trusts the simulator's CA (verification stays on).
"""

import argparse
import asyncio
import json
import resource
import ssl
import time

from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsDevelopmentClientProtocol


async def run(args: argparse.Namespace) -> dict:
    APNsDevelopmentClientProtocol.APNS_SERVER = args.host
    APNsDevelopmentClientProtocol.APNS_PORT = args.port
    context = ssl.create_default_context(cafile=args.ca)
    context.set_alpn_protocols(["h2"])
    with open(args.key) as key_file:
        key = key_file.read()
    client = APNs(
        key=key,
        key_id=args.key_id,
        team_id=args.team_id,
        topic=args.topic,
        use_sandbox=True,
        ssl_context=context,
        max_connections=args.connections,
    )
    message = json.loads(args.payload)
    semaphore = asyncio.Semaphore(args.concurrency)
    ok = 0

    async def send_one() -> None:
        nonlocal ok
        async with semaphore:
            result = await client.send_notification(
                NotificationRequest(device_token=args.token, message=message, push_type=PushType.ALERT)
            )
            if result.is_successful:
                ok += 1

    await asyncio.gather(*(send_one() for _ in range(min(args.concurrency, args.count))))
    ok = 0
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    await asyncio.gather(*(send_one() for _ in range(args.count)))
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"sent": args.count, "ok": ok, "seconds": seconds, "rate": args.count / seconds, "cpu_seconds": cpu}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="localhost")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--team-id", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--payload", required=True)
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--connections", type=int, default=1)
    print(json.dumps(asyncio.run(run(parser.parse_args()))))


if __name__ == "__main__":
    main()
