"""The cases of the BVH fuzzer (``benchmarks/fuzz_bvh.py``): seed files and mutations.

Seeds are the shared clips (``../shared/data/bvh`` and ``bvh_more``, cut to a few frames)
and files made by code; mutations are byte flips, inserted separators and braces, deleted or
repeated spans, truncation, extreme numbers, huge frame counts, odd frame times, random
``CHANNELS`` lines, random hierarchies and deep nesting. :func:`mutate`, :data:`MUTATIONS`
and :func:`seed_corpus` are also used by ``tests/test_bvh_fuzz.py`` (through ``fuzz_bvh``).
"""

from __future__ import annotations

import collections
import random
import re
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"

# --------------------------------------------------------------------------------------------
# Seed files
# --------------------------------------------------------------------------------------------

BASE = b"""HIERARCHY
ROOT Hips
{
  OFFSET 1.0 2.0 3.0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
  JOINT Spine
  {
    OFFSET 0 5 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 4 0
    }
  }
  JOINT Leg
  {
    OFFSET 2 -5 0
    CHANNELS 6 Xposition Yposition Zposition Yrotation Xrotation Zrotation
    End Site
    {
      OFFSET 0 -4 0
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.04
10 20 30 1 2 3 4 5 6 7 8 9 10 11 12
11 21 31 2 3 4 5 6 7 8 9 10 11 12 13
12 22 32 3 4 5 6 7 8 9 10 11 12 13 14
"""

PARTIAL = b"""HIERARCHY
ROOT root
{
  OFFSET 5 6 7
  CHANNELS 2 Yposition Yrotation
  JOINT a
  {
    OFFSET 0 1 0
    CHANNELS 2 Zrotation Xrotation
    JOINT b
    {
      OFFSET 0 1 0
      CHANNELS 0
      JOINT c
      {
        OFFSET 1 0 0
        CHANNELS 3 Xposition Xrotation Yrotation
      }
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.5
1.5 30 10 -20 0.25 45 90
2.5 -60 -15 95 0.5 -30 -90
"""

NO_CHANNELS = b"""HIERARCHY
ROOT a
{
\tOFFSET 0 0 0
\tCHANNELS 0
\tJOINT b
\t{
\t\tOFFSET 0 1 0
\t}
}
MOTION
Frames: 2
Frame Time: 0.1


"""

CHANNEL_NAMES = [f"{a}{k}" for k in ("position", "rotation") for a in "XYZ"]


def generated_file(rng: random.Random) -> bytes:
    """A random, mostly valid file: a random tree, random channel lists, random values."""
    num_joints = rng.randint(1, 7)
    parents = [-1] + [rng.randrange(j) for j in range(1, num_joints)]
    if rng.random() < 0.2:
        parents = [rng.choice([-1, *range(j)]) if j else -1 for j in range(num_joints)]
    children = collections.defaultdict(list)
    for j, p in enumerate(parents):
        children[p].append(j)
    columns = []

    def channels() -> list[str]:
        kind = rng.random()
        if kind < 0.75:  # an ordinary layout
            rot = rng.choice(["ZYX", "ZXY", "XYZ", "YXZ", "XZY", "YZX", "ZXZ", "XYX", "YZY"])
            names = [f"{a}rotation" for a in rot]
            if rng.random() < 0.3:
                names = ["Xposition", "Yposition", "Zposition", *names]
        elif kind < 0.95:  # anything: repeats, any number, any order
            names = [rng.choice(CHANNEL_NAMES) for _ in range(rng.randint(0, 5))]
        else:
            names = []
        if rng.random() < 0.1:
            names = [n.upper() if rng.random() < 0.5 else n.lower() for n in names]
        return names

    def number() -> str:
        roll = rng.random()
        if roll < 0.9:
            return f"{rng.uniform(-400, 400):.{rng.randint(0, 7)}f}"
        if roll < 0.99:
            return rng.choice(["90", "-90", "180", "-180", "0", "-0", "270", "360", "0.0000005"])
        return rng.choice(EXTREME_NUMBERS)

    lines = ["HIERARCHY"]

    def joint(j: int, depth: int) -> None:
        pad = "  " * depth
        lines.append(f"{pad}{'ROOT' if parents[j] < 0 else 'JOINT'} j{j}")
        lines.append(pad + "{")
        lines.append(f"{pad}  OFFSET {number()} {number()} {number()}")
        names = channels()
        columns.extend(names)
        lines.append(f"{pad}  CHANNELS {len(names)} {' '.join(names)}".rstrip())
        site = [pad + "  End Site", pad + "  {", f"{pad}    OFFSET 0 {number()} 0", pad + "  }"]
        first = children[j] and rng.random() < 0.2  # an End Site before the child joints
        lines.extend(site if first else [])
        for child in children[j]:
            joint(child, depth + 1)
        lines.extend(site if not children[j] or rng.random() < 0.2 else [])
        lines.append(pad + "}")

    for root in children[-1]:
        joint(root, 0)
    num_frames = rng.choice([0, 1, 1, 2, 3, 5])
    frame_time = rng.choice(["0.0333333", "0.008333", "0", "1", "0.04", "1e-3"])
    lines += ["MOTION", f"Frames: {num_frames}", f"Frame Time: {frame_time}"]
    lines += [" ".join(number() for _ in columns) for _ in range(num_frames)]
    return ("\n".join(lines) + "\n").encode()


def deep_file(depth: int, channels: str = "CHANNELS 1 Zrotation") -> bytes:
    """A chain ``depth`` joints deep, one frame."""
    opening = [f"JOINT j{j}\n{{\nOFFSET 0 1 0\n{channels}\n" for j in range(1, depth)]
    count = int(channels.split()[1])
    row = " ".join(["10"] * (count * depth))
    return (
        f"HIERARCHY\nROOT j0\n{{\nOFFSET 0 0 0\n{channels}\n"
        + "".join(opening)
        + "}\n" * depth
        + f"MOTION\nFrames: 1\nFrame Time: 0.1\n{row}\n"
    ).encode()


def shortened(data: bytes, rows: int) -> bytes:
    """A real clip cut to its first ``rows`` frame rows (its ``Frames:`` line adjusted)."""
    match = re.search(rb"Frames\s*:\s*\d+", data, re.IGNORECASE)
    if match is None:
        return data
    lines = data[match.end() :].split(b"\n")
    head = data[: match.start()] + b"Frames: %d" % rows
    return head + b"\n".join(lines[: rows + 2]) + b"\n"


GENERATED_SEEDS = 8  # seed_corpus()[6:14], the others read and round-trip


def seed_corpus(shared: Path | None = SHARED, rows: int = 4) -> list[bytes]:
    """The shared clips (cut to ``rows`` frames) and the files made by code."""
    seeds = [BASE, PARTIAL, NO_CHANNELS, BASE.replace(b"\n", b"\r\n"), deep_file(50)]
    seeds.append(
        BASE.replace(b"JOINT Leg", b"}\nROOT Leg").replace(b"  }\n}\nMOTION", b"}\nMOTION")
    )
    rng = random.Random(1)
    seeds += [generated_file(rng) for _ in range(GENERATED_SEEDS)]  # some of them invalid
    if shared is not None:
        for folder in ("bvh", "bvh_more"):
            for path in (
                sorted((shared / folder).glob("*.bvh")) if (shared / folder).is_dir() else []
            ):
                seeds.append(shortened(path.read_bytes(), rows))
    return seeds


# --------------------------------------------------------------------------------------------
# Mutations: each takes the file and a random generator and returns the new file
# --------------------------------------------------------------------------------------------

EXTREME_NUMBERS = [
    "1e400", "-1e400", "1e308", "-1e308", "1.7976931348623157e308", "5e-324", "1e-400",
    "1e30", "-1e30", "1e31", "1e22", "1e23", "123456789.123456789", "1" * 400, "9" * 5000,
    "0." + "0" * 400 + "1", "nan", "inf", "-inf", "1e", ".", "-", "1e99999999999", "0x10",
    "1_000", "1,5", "+.5", "7.", "00042", "-0", "1e6", "-1e7", "3.5e9",
]  # fmt: skip
HUGE_COUNTS = [
    "100000000000000000000", "10000000000", "100000000", "2147483648", "9" * 5000,
    "18446744073709551616", "1000000", "-1", "1.5", "", "0x10", "0",
]  # fmt: skip
FRAME_TIMES = ["5e-324", "1e-310", "0", "-0", "1e-300", "1e300", "inf", "nan", "-1", "1e400",
               "0.0333333", "1e-9", "2.5e-308"]  # fmt: skip
SEPARATORS = [b" ", b"\t", b"\n", b"\r", b"\r\n", b"\f", b"\v", b"\x1c", b"\x85", b"\xa0",
              b"\xc2\xa0", b"\xe2\x80\xa8", b"\x00"]  # fmt: skip
NUMBER = re.compile(rb"[-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?")
SPACE = re.compile(rb"[ \t\n]")


def _splice(data: bytes, start: int, end: int, new: bytes) -> bytes:
    return data[:start] + new + data[end:]


def flip_bits(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if out:
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def set_byte(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return data
    i = rng.randrange(len(data))
    return _splice(data, i, i + 1, bytes([rng.choice(b" \t\n\r\f\v{}-+.eE019#:\x00\xff")]))


def insert_token(data: bytes, rng: random.Random) -> bytes:
    words = [b"{", b"}", b"}\n", b"{\n", b"JOINT x", b"End Site", b"OFFSET 0 0 0", b"ROOT r",
             b"MOTION", b"\nMOTION\n", b"CHANNELS 1 Xrotation", b"1", b"-", b" 1e5 "]  # fmt: skip
    i = rng.randint(0, len(data))
    return _splice(data, i, i, rng.choice(words))


def delete_span(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return data
    i = rng.randrange(len(data))
    return _splice(data, i, min(len(data), i + rng.choice([1, 2, 5, 20, 200])), b"")


def repeat_span(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return data
    i = rng.randrange(len(data))
    span = data[i : i + rng.choice([1, 10, 100, 1000])]
    j = rng.randint(0, len(data))
    return _splice(data, j, j, span * rng.choice([1, 2, 10]))


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randint(0, len(data))]


def swap_separator(data: bytes, rng: random.Random) -> bytes:
    spaces = list(SPACE.finditer(data))
    if not spaces:
        return data
    for _ in range(rng.randint(1, 3)):
        match = rng.choice(spaces)
        data = _splice(data, match.start(), match.end(), rng.choice(SEPARATORS))
        spaces = list(SPACE.finditer(data)) or spaces
    return data


def extreme_number(data: bytes, rng: random.Random) -> bytes:
    numbers = list(NUMBER.finditer(data))
    if not numbers:
        return data
    match = rng.choice(numbers)
    return _splice(data, match.start(), match.end(), rng.choice(EXTREME_NUMBERS).encode())


EDGE_ANGLES = ["90", "-90", "180", "-180", "0", "-0", "270", "360", "-720", "89.9999995",
               "0.0000005", "-0.0000005", "179.9999995", "90.000001", "1e7", "-1e7",
               "9999999.9999995"]  # fmt: skip


def edge_angle(data: bytes, rng: random.Random) -> bytes:
    """Put gimbal-lock and wrap-around angles (and halfway roundings) into frame rows."""
    motion = data.find(b"MOTION")
    numbers = [m for m in NUMBER.finditer(data) if m.start() > motion >= 0]
    for _ in range(rng.randint(1, 6)):
        if numbers:
            match = numbers.pop(rng.randrange(len(numbers)))
            new = rng.choice(EDGE_ANGLES).encode().ljust(match.end() - match.start())
            if len(new) == match.end() - match.start():  # keep the offsets of the others
                data = _splice(data, match.start(), match.end(), new)
    return data


def change_case(data: bytes, rng: random.Random) -> bytes:
    """Keywords and channel names in another case (they are case-insensitive)."""
    words = list(re.finditer(rb"[A-Za-z]+", data))
    for _ in range(rng.randint(1, 5)):
        if words:
            match = rng.choice(words)
            word = match.group()
            new = rng.choice([word.lower(), word.upper(), word.swapcase()])
            data = _splice(data, match.start(), match.end(), new)
    return data


def frame_count(data: bytes, rng: random.Random) -> bytes:
    match = re.search(rb"(Frames\s*:[ \t]*)(\S*)", data, re.IGNORECASE)
    if match is None:
        return data
    new = rng.choice(HUGE_COUNTS)
    if rng.random() < 0.3 and match.group(2).isdigit() and len(match.group(2)) < 18:
        new = str(max(0, int(match.group(2)) + rng.choice([-1, 1, 2, 1000])))
    return _splice(data, match.start(2), match.end(2), new.encode())


def frame_time(data: bytes, rng: random.Random) -> bytes:
    match = re.search(rb"(Frame\s+Time\s*:[ \t]*)(\S*)", data, re.IGNORECASE)
    if match is None:
        return data
    return _splice(data, match.start(2), match.end(2), rng.choice(FRAME_TIMES).encode())


def channels_line(data: bytes, rng: random.Random) -> bytes:
    """Replace the names of one CHANNELS line by as many others (repeats allowed)."""
    lines = list(re.finditer(rb"CHANNELS[ \t]+(\d+)((?:[ \t]+\w+)*)", data))
    if not lines:
        return data
    match = rng.choice(lines)
    count = len(match.group(2).split())
    names = [rng.choice(CHANNEL_NAMES) for _ in range(count)]
    if rng.random() < 0.3 and count:  # same channels, other order
        names = match.group(2).decode().split()
        rng.shuffle(names)
    new = f"CHANNELS {count} {' '.join(names)}".rstrip()
    return _splice(data, match.start(), match.end(), new.encode())


def joint_name(data: bytes, rng: random.Random) -> bytes:
    names = list(re.finditer(rb"(?:ROOT|JOINT)[ \t]+([^\n{]*)", data))
    if not names:
        return data
    match = rng.choice(names)
    new = rng.choice(
        [b"x" * 5000, "Ünïcødé".encode(), b"a b", b"a  b", b"a\xa0", b"\xe9t\xe9", b"#1",
         b"End", b"MOTION", b"x\x00y", b"\xff\xfe", b"j" + str(rng.randrange(3)).encode()]
    )  # fmt: skip
    return _splice(data, match.start(1), match.end(1), new)


def deep(data: bytes, rng: random.Random) -> bytes:
    channels = rng.choice(
        ["CHANNELS 1 Zrotation", "CHANNELS 0", "CHANNELS 3 Xposition Zrotation Xrotation"]
    )
    return deep_file(rng.choice([1000, 2000, 5000]), channels)


def generate(data: bytes, rng: random.Random) -> bytes:
    return generated_file(rng)


def zero_channel_count(data: bytes, rng: random.Random) -> bytes:
    count = rng.choice(["100000000", "10000000000", "3", "1000", "1" + "0" * 30])
    return NO_CHANNELS.replace(b"Frames: 2", b"Frames: " + count.encode())


def splice_files(data: bytes, rng: random.Random) -> bytes:
    i = rng.randint(0, len(data))
    other = rng.choice([BASE, PARTIAL, NO_CHANNELS])
    j = rng.randint(0, len(other))
    return data[:i] + other[j:]


MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    f.__name__: f
    for f in (
        flip_bits, set_byte, insert_token, delete_span, repeat_span, truncate, swap_separator,
        extreme_number, frame_count, frame_time, channels_line, joint_name, deep, generate,
        zero_channel_count, splice_files, edge_angle, change_case,
    )
}  # fmt: skip


def mutate(data: bytes, steps: list[tuple[str, int]]) -> bytes:
    """Apply the named mutations in turn, each with its own seed."""
    for name, seed in steps:
        data = MUTATIONS[name](data, random.Random(seed))
    return data


def random_steps(rng: random.Random) -> list[tuple[str, int]]:
    names = sorted(MUTATIONS)
    weights = [0.2 if n in ("deep", "zero_channel_count") else 1.0 for n in names]
    count = rng.choice([1, 1, 1, 2, 2, 3])
    return [(rng.choices(names, weights)[0], rng.randrange(2**32)) for _ in range(count)]
