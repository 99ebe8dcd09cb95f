#!/usr/bin/env python3
"""The house: the project's rooms (folders with a CMake target), read from the sources.

Reads every CMakeLists.txt and every #include of the product's folders (kubeslurm/,
controllers/, operator/, cmd/) and checks the layout docs/architecture.md promises:

  * one target per folder, its sources listed by name (no file(GLOB)), every .cc of the folder
    in its list;
  * no include without a matching link: a file that includes another room's header belongs to
    a target that links that room's target, directly or through PUBLIC links;
  * arrows point one way: a library (kubeslurm/*) includes no controller or binary room, the
    controllers no binary room, no binary another binary's room; the rooms' graph and the
    files' graph (a file and its header are one module) have no circle;
  * the pure rooms include no other room but pure ones, and no header that does I/O, threads
    or clocks.

  tests/structure/house.py                  check (exit 1 with the broken rules)
  tests/structure/house.py --markdown       the layout table and the arrows, as the doc has them
  tests/structure/house.py --check-doc FILE also check that FILE holds that text between
                                            <!-- house:begin --> and <!-- house:end -->
  tests/structure/house.py --write-doc FILE put that text there
"""
import argparse
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
PRODUCT = ['kubeslurm', 'controllers', 'operator', 'cmd']
PURE = {'kubeslurm/base', 'kubeslurm/slurm', 'kubeslurm/core', 'kubeslurm/sim'}
# Headers a pure room may not include: I/O, threads, clocks, randomness, processes.
IMPURE_HEADERS = {'thread', 'mutex', 'condition_variable', 'future', 'atomic', 'chrono',
                  'fstream', 'iostream', 'filesystem', 'random', 'ctime', 'cstdio', 'unistd.h',
                  'csignal', 'sys/socket.h'}
BEGIN, END = '<!-- house:begin -->', '<!-- house:end -->'


def room_kind(room):
    if room.startswith('kubeslurm/'):
        return 'library'
    if room == 'controllers':
        return 'controllers'
    return 'binary'


# --- CMake ------------------------------------------------------------------------------------

def cmake_commands(text):
    """(name, [args]) for each command, comments stripped; arguments split on whitespace."""
    text = re.sub(r'#[^\n]*', '', text)
    out = []
    for match in re.finditer(r'([A-Za-z_][A-Za-z0-9_]*)\s*\(', text):
        depth, i = 1, match.end()
        while depth and i < len(text):
            depth += {'(': 1, ')': -1}.get(text[i], 0)
            i += 1
        out.append((match.group(1).lower(), text[match.end():i - 1].split()))
    return out


class Target:
    def __init__(self, name, kind, room, sources):
        self.name, self.kind, self.room, self.sources = name, kind, room, sources
        self.public, self.private = set(), set()


def read_targets(problems):
    targets, aliases = {}, {}
    for top in PRODUCT:
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            if 'CMakeLists.txt' not in files:
                continue
            room = os.path.relpath(folder, ROOT)
            with open(os.path.join(folder, 'CMakeLists.txt'), encoding='utf-8') as f:
                commands = cmake_commands(f.read())
            for name, args in commands:
                if name == 'file' and args and args[0].upper().startswith('GLOB'):
                    problems.append(f'{room}/CMakeLists.txt globs its sources: list them')
                if name in ('add_library', 'add_executable') and args:
                    if len(args) >= 2 and args[1] == 'ALIAS':
                        aliases[args[0]] = args[2]
                        continue
                    sources = [a for a in args[1:] if a.endswith('.cc')]
                    if not sources:
                        continue
                    kind = 'library' if name == 'add_library' else 'executable'
                    targets[args[0]] = Target(args[0], kind, room, sources)
                if name == 'target_link_libraries' and args and args[0] in targets:
                    scope = 'PUBLIC'
                    for item in args[1:]:
                        if item in ('PUBLIC', 'PRIVATE', 'INTERFACE'):
                            scope = item
                            continue
                        dest = targets[args[0]].private if scope == 'PRIVATE' else \
                            targets[args[0]].public
                        dest.add(item)
    # Our targets by alias; third-party names stay as they are.
    for t in targets.values():
        t.public = {aliases.get(x, x) for x in t.public}
        t.private = {aliases.get(x, x) for x in t.private}
    return targets


def visible_targets(target, targets):
    """What `target` may include: itself, its direct links, and whatever they link PUBLIC."""
    seen = {target.name}
    todo = list(target.public | target.private)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in targets:
            todo.extend(targets[name].public)
    return seen


# --- includes ---------------------------------------------------------------------------------

INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)


def read_files():
    files = {}
    for top in PRODUCT:
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                if name.endswith(('.h', '.cc')):
                    path = os.path.relpath(os.path.join(folder, name), ROOT)
                    with open(os.path.join(ROOT, path), encoding='utf-8') as f:
                        files[path] = INCLUDE.findall(f.read())
    return files


def header_room(path, rooms):
    """The room a quoted include belongs to (generated protobuf headers count as their .proto's)."""
    folder = os.path.dirname(path)
    return folder if folder in rooms else None


def module(path):
    stem = re.sub(r'\.(grpc\.pb|pb)?\.?(h|cc)$', '', path)
    return stem


def find_cycles(edges):
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def analyse():
    problems = []
    targets = read_targets(problems)
    by_room = {}
    for t in targets.values():
        if t.room in by_room and t.kind == by_room[t.room].kind:
            problems.append(f'{t.room} has two targets: {by_room[t.room].name}, {t.name}')
        if t.room not in by_room or t.kind == 'library':
            by_room[t.room] = t
    files = read_files()
    rooms = set(by_room)
    for top in ['tests', 'cmake']:
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            if 'CMakeLists.txt' in names:
                with open(os.path.join(folder, 'CMakeLists.txt'), encoding='utf-8') as f:
                    if re.search(r'file\s*\(\s*GLOB', f.read()):
                        problems.append(f'{os.path.relpath(folder, ROOT)}/CMakeLists.txt globs '
                                        'its sources: list them')

    for room, t in sorted(by_room.items()):
        listed = {os.path.normpath(os.path.join(room, s)) for s in t.sources}
        for path in files:
            if path.endswith('.cc') and os.path.dirname(path) == room and path not in listed:
                problems.append(f'{path} is in no target of {room}/CMakeLists.txt')
    for path in files:
        if os.path.dirname(path) not in rooms:
            problems.append(f'{path} lies in a folder without a target')

    arrows = {}  # room -> {room: count}
    module_edges = {}
    for path, includes in sorted(files.items()):
        room = os.path.dirname(path)
        if room not in by_room:
            continue
        target = by_room[room]
        visible = visible_targets(target, targets)
        for bracket, header in includes:
            if bracket == '<':
                if room in PURE and header in IMPURE_HEADERS:
                    problems.append(f'{path}: pure room includes <{header}>')
                continue
            other = header_room(header, rooms)
            if other is None:
                if header.startswith(('kubeslurm/', 'controllers/', 'operator/', 'cmd/')):
                    problems.append(f'{path}: includes {header}, which no room holds')
                continue
            module_edges.setdefault(module(path), set())
            if module(header) != module(path):
                module_edges[module(path)].add(module(header))
            if other == room:
                continue
            arrows.setdefault(room, {}).setdefault(other, 0)
            arrows[room][other] += 1
            if by_room[other].name not in visible:
                problems.append(f'{path}: includes {header} but {target.name} does not link '
                                f'{by_room[other].name}')
            kind, other_kind = room_kind(room), room_kind(other)
            if other_kind == 'binary':
                problems.append(f'{path}: includes {header} from the binary room {other}')
            elif kind == 'library' and other_kind != 'library':
                problems.append(f'{path}: the library {room} includes {header} ({other_kind})')
            if room in PURE and other not in PURE:
                problems.append(f'{path}: the pure room {room} includes {header}')
    for cycle in find_cycles({r: set(a) for r, a in arrows.items()}):
        problems.append('rooms include each other: ' + ' -> '.join(cycle))
    for cycle in find_cycles(module_edges):
        problems.append('files include each other: ' + ' -> '.join(cycle))
    return by_room, arrows, problems


# --- the doc ----------------------------------------------------------------------------------

def summary(room):
    """The first sentence of the comment at the top of the room's CMakeLists.txt."""
    lines = []
    with open(os.path.join(ROOT, room, 'CMakeLists.txt'), encoding='utf-8') as f:
        for line in f:
            if not line.startswith('#'):
                break
            lines.append(line[1:].strip())
    text = ' '.join(lines)
    end = re.search(r'\.(\s|$)', text)
    return (text[:end.start()] if end else text).replace('|', '\\|')


def levels(rooms, arrows):
    """A room's height in the graph: 0 for a room that includes no other, else one above the
    highest room it includes (well defined: the rooms' graph has no circle once checked)."""
    memo = {}

    def height(room, seen=()):
        if room in memo:
            return memo[room]
        if room in seen:
            return 0
        deps = arrows.get(room, {})
        memo[room] = 1 + max((height(d, seen + (room,)) for d in deps), default=-1)
        return memo[room]

    return {room: height(room) for room in rooms}


def markdown(by_room, arrows):
    order = {'library': 0, 'controllers': 1, 'binary': 2}
    height = levels(by_room, arrows)
    rooms = sorted(by_room, key=lambda r: (order[room_kind(r)], height[r], r))
    out = ['| room | target | pure | what it is |', '| --- | --- | --- | --- |']
    for room in rooms:
        t = by_room[room]
        pure = 'yes' if room in PURE else ''
        out.append(f'| `{room}/` | `{t.name}` | {pure} | {summary(room)} |')
    out += ['', 'Arrows, bottom up (a room includes headers of, and links, the rooms after it):', '',
            '```']
    width = max(len(r) for r in rooms)
    for room in rooms:
        deps = sorted(arrows.get(room, {}), key=lambda r: (order[room_kind(r)], height[r], r))
        out.append(f'{room.ljust(width)} -> ' + (', '.join(d.replace('kubeslurm/', '')
                                                             for d in deps) or '(nothing)'))
    out.append('```')
    return '\n'.join(out) + '\n'


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--markdown', action='store_true')
    parser.add_argument('--check-doc')
    parser.add_argument('--write-doc')
    args = parser.parse_args()
    by_room, arrows, problems = analyse()
    text = markdown(by_room, arrows)
    if args.markdown:
        sys.stdout.write(text)
        return 0
    if args.write_doc:
        with open(args.write_doc, encoding='utf-8') as f:
            doc = f.read()
        begin, end = doc.find(BEGIN), doc.find(END)
        if begin < 0 or end < 0:
            print(f'{args.write_doc} has no {BEGIN} ... {END} block')
            return 1
        with open(args.write_doc, 'w', encoding='utf-8') as f:
            f.write(doc[:begin + len(BEGIN)] + '\n' + text + doc[end:])
        return 0
    if args.check_doc:
        with open(args.check_doc, encoding='utf-8') as f:
            doc = f.read()
        begin, end = doc.find(BEGIN), doc.find(END)
        if begin < 0 or end < 0 or doc[begin + len(BEGIN):end].strip() != text.strip():
            problems.append(f'{args.check_doc} does not hold the house as built between '
                            f'{BEGIN} and {END}: paste `tests/structure/house.py --markdown`')
    for problem in problems:
        print(problem)
    if not problems:
        print(f'house: {len(by_room)} rooms, '
              f'{sum(len(a) for a in arrows.values())} arrows, no rule broken')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
