#!/usr/bin/env python3
"""Checks what the compiler cannot about Coffer's layers (the DocC article "Architecture").

Package.swift's target dependencies are the walls between modules: the compiler refuses an import a target
does not list. This script checks the rest, from the tables below:

1. Modules: every `import` in a target's Swift sources names a module that target may import
   (`MAY_IMPORT`), and `MAY_IMPORT` agrees with the target's dependencies in Package.swift (so nothing
   is reached through a dependency's dependency). A target missing from the table is an error: a new
   module says what it may import.
2. Folders inside a module (`FOLDER_ORDER`): every type is defined in one folder; a file that names a
   type defined in a folder of a later (higher) rank, or of another folder of the same rank, depends
   upward and is a violation, unless it is listed in `KNOWN_EXCEPTIONS`. So does a file that names a
   member an extension in such a folder adds to a type of a lower folder or module (`extension Connection
   { var tracker }` in Pool), unless the file's own folder, a lower one or a module it may import declares
   that name too. A file at a module's root may only import.
3. The Architecture article's tables say the same: each module's "may import" cell and each module's
   folder order.

Type references are found by name, outside comments and string literals, for the types declared at file
scope (`struct`, `class`, `enum`, `protocol`, `actor`, `typealias`); a nested type is reached through the
type it is nested in.

Usage: Tools/check-layers.py [package root]. Exit status 0 when clean, 1 on any violation.
"""

import os
import re
import sys

# Modules every target may import: the platform's own.
SYSTEM_MODULES = {"Foundation", "FoundationXML", "Dispatch", "Glibc", "Darwin", "os", "XCTest"}

# What each target may import (besides SYSTEM_MODULES). Every dependency Package.swift lists for the target
# must be here, and every package-local target here must be listed there (or be in TRANSITIVE_OK); the
# other names are modules of the pinned packages' products.
MAY_IMPORT = {
    "CSQLCipher": set(),
    "COpenSSL": set(),
    "CZstd": set(),
    "CofferVFS": {"CSQLCipher", "COpenSSL"},
    "CofferPageCache": {"CSQLCipher", "COpenSSL"},
    "CofferTokenizer": {"CSQLCipher"},
    "CofferMacros": {"SwiftSyntax", "SwiftSyntaxMacros", "SwiftCompilerPlugin"},
    "CofferFormat": {"COpenSSL", "Crypto", "_CryptoExtras"},
    "CofferEngine": {
        "CofferFormat", "CSQLCipher", "CofferVFS", "CofferPageCache", "CofferTokenizer", "CZstd", "Atomics",
        "Logging", "Metrics", "CoreMetrics", "Tracing", "Crypto", "_CryptoExtras",
    },
    "CofferRecords": {"CofferEngine", "CSQLCipher", "CofferMacros"},
    "CofferSearch": {"CofferEngine", "CofferRecords", "CSQLCipher", "CofferTokenizer"},
    "CofferStores": {"CofferEngine", "CofferRecords", "CofferSearch"},
    "CofferBackup": {"CofferEngine", "CofferRecords", "CofferFormat", "CSQLCipher", "Crypto", "_CryptoExtras"},
    "Coffer": {"CofferEngine", "CofferRecords", "CofferSearch", "CofferStores", "CofferBackup"},
    "CofferRepair": {"Coffer", "CofferFormat", "Crypto"},
    "CofferCorruption": {"CofferFormat", "CofferRepair", "CofferTestSupport"},
    "coffer": {"Coffer", "CofferRepair", "ArgumentParser"},
    "coffer-bench": {
        "Coffer", "CofferTestSupport", "CSQLCipher", "CofferTokenizer", "COpenSSL", "ArgumentParser", "Crypto", "_CryptoExtras",
        "Prometheus",
    },
    "coffer-corrupt": {"CofferCorruption", "CofferRepair", "Coffer", "ArgumentParser"},
    "CofferTestVFS": {"CSQLCipher"},
    "CofferTestSupport": {"Crypto", "_CryptoExtras", "Logging", "InMemoryLogging"},
    "coffer-torture": {"Coffer", "CofferTestSupport", "ArgumentParser"},
    # Test targets: their Package.swift dependencies, plus the C module a dependency re-exports where a
    # test drives SQLite directly (CSQLCipher through Coffer).
    "CofferTests": {"Coffer", "CofferEngine", "CofferRecords", "CofferSearch", "CofferStores", "CofferBackup", "CofferTestSupport", "CofferVFS", "CSQLCipher"},
    "CofferCLITests": {"coffer", "Coffer", "CofferTestSupport"},
    "CofferQueryTests": {"Coffer", "CofferEngine", "CofferRecords", "CofferSearch", "CofferStores", "CofferBackup", "CofferTestSupport", "InMemoryLogging"},
    "CofferRepairTests": {"CofferFormat", "CofferRepair", "Coffer", "CofferTestSupport", "CSQLCipher"},
    "CofferKeyValueTests": {"Coffer", "CofferEngine", "CofferRecords", "CofferSearch", "CofferStores", "CofferBackup", "CofferTestSupport"},
    "CofferMonitoringTests": {"Coffer", "CofferEngine", "CofferRecords", "CofferSearch", "CofferStores", "CofferBackup", "CofferTestSupport", "InMemoryLogging", "Metrics", "MetricsTestKit", "InMemoryTracing", "Tracing", "Prometheus"},
    "CofferBackupTests": {"Coffer", "CofferTestSupport", "CofferTestVFS", "coffer", "coffer-torture"},
    "CofferReliabilityTests": {"CofferRepair", "Coffer", "CofferTestSupport", "CofferTestVFS", "coffer", "coffer-torture"},
    "CofferPublicAPITests": {"Coffer", "CofferTestSupport", "coffer"},
    "CofferDocumentationTests": {"Coffer", "CofferRepair", "CofferTestSupport"},
    "CofferCorruptionTests": {
        "CofferCorruption", "CofferRepair", "Coffer", "CSQLCipher", "CofferTestSupport", "coffer-corrupt",
    },
}

# Package-local names a test target may import without listing them in Package.swift (re-exported by a
# listed dependency): see MAY_IMPORT's test targets.
TRANSITIVE_OK = {"CSQLCipher"}

# Folders inside a module, lowest first. A folder may use its own types and those of lower ranks; folders
# in one rank (a set) are independent of each other.
FOLDER_ORDER = {
    # The umbrella: one file at its root, which only re-exports the five layers.
    "Coffer": [],
    "CofferEngine": [
        {"Core"},
        {"Connection"},
        {"Encryption"},
        {"Compression"},
        {"Monitoring"},
        {"Pool"},
    ],
    "CofferRecords": [
        {"Record"},
        {"Query"},
        {"Migration"},
        {"Association"},
        {"Observation"},
        {"RecordCache"},
        {"LiveMigration"},
    ],
    "CofferSearch": [
        {"FullText"},
        {"Schema"},
    ],
    "CofferStores": [
        {"KeyValue"},
        {"Documents"},
        {"Settings"},
    ],
    "CofferBackup": [
        {"Backup"},
        {"Inspection"},
        {"Maintenance"},
    ],
    "CofferRepair": [
        {"SchemaText"},
        {"BTree"},
        {"Salvage"},
        {"FileMigration"},
        {"Inspection"},
        {"Statistics", "PageMap"},
    ],
}

# (module, folder, referenced type): known upward references, each with the reason it is still here.
KNOWN_EXCEPTIONS: set[tuple[str, str, str]] = set()

DECLARATION = re.compile(
    r"^(?P<indent>\s*)(?:@\w+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|internal|package|fileprivate|private|final|open|indirect|nonisolated)\s+)*"
    r"(?:struct|class|enum|protocol|actor|typealias)\s+(?P<name>[A-Za-z_]\w*)"
)
EXTENSION = re.compile(r"^\s*(?:(?:public|internal|package|fileprivate|private)\s+)?extension\s+")
IMPORT = re.compile(
    r"^\s*(?:@testable\s+|@_spi\(\w+\)\s+|@_implementationOnly\s+|@preconcurrency\s+)*"
    r"(?:(?:public|internal|package|private|fileprivate)\s+)?import\s+(?:(?:struct|class|enum|func|var|let)\s+)?"
    r"(?P<module>[A-Za-z_][\w]*)"
)
IDENTIFIER = re.compile(r"\b[A-Z_][A-Za-z0-9_]*\b")


def strip_comments_and_strings(text):
    """The Swift source with comments and string literals blanked (line breaks kept)."""
    out = []
    i = 0
    n = len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text[i] == '"' or (text[i] == "#" and re.match(r'#+"', text[i:])):
            hashes = len(re.match(r"#*", text[i:]).group(0))
            start = i + hashes
            triple = text.startswith('"""', start)
            quote = '"""' if triple else '"'
            close = quote + "#" * hashes
            j = start + len(quote)
            while j < n and not text.startswith(close, j):
                if text[j] == "\\" and hashes == 0:
                    j += 1
                    if j < n and text[j] == "(":  # interpolation: keep it as code
                        depth = 1
                        k = j + 1
                        while k < n and depth:
                            depth += {"(": 1, ")": -1}.get(text[k], 0)
                            k += 1
                        out.append(" " + text[j:k] + " ")
                        j = k
                        continue
                elif not triple and text[j] == "\n":
                    break
                j += 1
            j = min(n, j + len(close))
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def swift_files(directory):
    for root, _, files in os.walk(directory):
        for name in sorted(files):
            if name.endswith(".swift"):
                yield os.path.join(root, name)


def read(path):
    with open(path, encoding="utf-8") as handle:
        return strip_comments_and_strings(handle.read())


def package_targets(root):
    """{target name: (source directory, [dependency names: targets and products])} from Package.swift."""
    with open(os.path.join(root, "Package.swift"), encoding="utf-8") as handle:
        manifest = strip_line_comments(handle.read())
    targets = {}
    kinds = r"\.(target|testTarget|executableTarget|systemLibrary|macro)\("
    starts = [m for m in re.finditer(kinds, manifest)]
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(manifest)
        body = manifest[match.end():end]
        name = re.search(r'name:\s*"([^"]+)"', body).group(1)
        path = re.search(r'path:\s*"([^"]+)"', body)
        default = "Tests" if match.group(1) == "testTarget" else "Sources"
        directory = path.group(1) if path else os.path.join(default, name)
        deps = re.search(r"dependencies:\s*\[(.*?)\]\s*[,)]", body, re.S)
        listed = []
        if deps:
            products = re.findall(r'\.product\(\s*name:\s*"([^"]+)"[^)]*\)', deps.group(1))
            local = re.findall(r'"([^"]+)"', re.sub(r"\.product\([^)]*\)", "", deps.group(1)))
            listed = local + products
        targets[name] = (directory, listed)
    return targets


def strip_line_comments(text):
    """The manifest without `//` comments (a `//` inside a URL follows a colon and stays)."""
    return re.sub(r"(^|\s)//[^\n]*", r"\1", text)


def check_modules(root, problems):
    targets = package_targets(root)
    for name, (directory, dependencies) in sorted(targets.items()):
        if name not in MAY_IMPORT:
            problems.append(f"{name}: not in MAY_IMPORT (Tools/check-layers.py): say what it may import")
            continue
        allowed = MAY_IMPORT[name]
        listed = set(dependencies)
        for missing in sorted(listed - allowed):
            problems.append(f"{name}: Package.swift depends on {missing}, MAY_IMPORT does not allow it")
        for extra in sorted({m for m in allowed if m in targets} - listed - TRANSITIVE_OK):
            problems.append(f"{name}: MAY_IMPORT allows {extra}, Package.swift does not list it")
        for path in swift_files(os.path.join(root, directory)):
            for number, line in enumerate(read(path).splitlines(), 1):
                match = IMPORT.match(line)
                if match and match.group("module") not in allowed | SYSTEM_MODULES:
                    rel = os.path.relpath(path, root)
                    problems.append(f"{rel}:{number}: {name} imports {match.group('module')}, not allowed")


# A member declared in an extension body (one level in), and any name a line declares.
MEMBER_DECLARATION = re.compile(
    r"^    (?:@\w+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|internal|package|fileprivate|private|final|static|class|mutating|nonisolated|override|lazy)"
    r"(?:\(set\))?\s+)*(?:func|var|let)\s+(?P<name>[A-Za-z_]\w*)"
)
DECLARED_NAME = re.compile(r"\b(?:func|var|let|case)\s+([A-Za-z_]\w*)|[(,]\s*(?:_\s+)?([a-z_]\w*)\s*:")
MEMBER_USE = re.compile(r"\b([a-z_][A-Za-z0-9_]*)\b")
# Names the standard library's own types also have (a call of Array.filter is not a use of Query's filter).
STANDARD_NAMES = {"filter", "map", "max", "min", "group", "first", "last", "count", "contains", "sorted", "reduce"}


def extension_members(files, defined):
    """{member name: folders} for members that extensions add to types defined elsewhere (a lower folder, a
    lower module or the platform): `extension Database { var changeTracker … }` in Backup makes
    `changeTracker` Backup's, whatever folder names it."""
    members = {}
    for path, (folder, text) in files.items():
        extended = None
        for line in text.splitlines():
            if line and not line[0].isspace():
                match = re.match(r"(?:(?:public|internal|package|fileprivate|private)\s+)?extension\s+([A-Za-z_][\w.]*)", line)
                extended = match.group(1).split(".")[0] if match else None
                continue
            if extended is None or folder in defined.get(extended, ()):
                continue
            match = MEMBER_DECLARATION.match(line)
            if match:
                members.setdefault(match.group("name"), set()).add(folder)
    return members


def check_folders(root, problems, notes):
    used_exceptions = set()
    for module, ranks in FOLDER_ORDER.items():
        base = os.path.join(root, "Sources", module)
        rank_of = {folder: index for index, group in enumerate(ranks) for folder in group}
        files = {}
        for path in swift_files(base):
            folder = os.path.relpath(path, base).split(os.sep)[0]
            if folder.endswith(".swift"):
                # A file at the module's root may only import (CofferRepair's re-export of CofferFormat).
                if any(DECLARATION.match(line) or EXTENSION.match(line) for line in read(path).splitlines()):
                    problems.append(f"{os.path.relpath(path, root)}: outside every folder of {module}")
                continue
            if folder not in rank_of:
                problems.append(f"Sources/{module}/{folder}: not in FOLDER_ORDER (Tools/check-layers.py)")
                rank_of[folder] = -1
            files[path] = (folder, read(path))
        defined = {}
        for path, (folder, text) in files.items():
            for line in text.splitlines():
                match = DECLARATION.match(line)
                if match and not match.group("indent"):
                    defined.setdefault(match.group("name"), set()).add(folder)
        for name, folders in sorted(defined.items()):
            if len(folders) > 1:
                problems.append(f"{module}: type {name} defined in several folders: {sorted(folders)}")
        members = extension_members(files, defined)
        declared_at = {}
        # Names declared in the package's modules this one may import count as lower (rank -1).
        for dependency in sorted(MAY_IMPORT.get(module, set())):
            for path in swift_files(os.path.join(root, "Sources", dependency)):
                for match in DECLARED_NAME.finditer(read(path)):
                    declared_at.setdefault(match.group(1) or match.group(2), set()).add(None)
        for path, (folder, text) in files.items():
            for match in DECLARED_NAME.finditer(text):
                declared_at.setdefault(match.group(1) or match.group(2), set()).add(folder)
        for path, (folder, text) in sorted(files.items()):
            own = rank_of[folder]
            for number, line in enumerate(text.splitlines(), 1):
                for name in set(MEMBER_USE.findall(line)) - STANDARD_NAMES:
                    for other in members.get(name, ()):
                        if other == folder or rank_of[other] < own:
                            continue
                        if any(f is None or f == folder or rank_of[f] < own for f in declared_at.get(name, ())):
                            continue  # a name of its own (or of a lower folder): not the extension's member
                        rel = os.path.relpath(path, root)
                        problems.append(
                            f"{rel}:{number}: {folder} uses {name} from {other} (a member an extension there adds)")
        for path, (folder, text) in sorted(files.items()):
            own = rank_of[folder]
            for number, line in enumerate(text.splitlines(), 1):
                for name in set(IDENTIFIER.findall(line)):
                    for other in defined.get(name, ()):
                        if other == folder or rank_of[other] < own:
                            continue
                        if (module, folder, name) in KNOWN_EXCEPTIONS:
                            used_exceptions.add((module, folder, name))
                            continue
                        rel = os.path.relpath(path, root)
                        problems.append(f"{rel}:{number}: {folder} uses {name} from {other} (higher or same rank)")
    for module, folder, name in sorted(KNOWN_EXCEPTIONS - used_exceptions):
        if module in FOLDER_ORDER:
            notes.append(f"note: {module}/{folder} no longer uses {name}: remove it from KNOWN_EXCEPTIONS")


ARCHITECTURE = os.path.join("Sources", "Coffer", "Documentation.docc", "Architecture.md")


def article_tables(root):
    """The rows of the tables in the Architecture article, each a list of cells; [] without it."""
    path = os.path.join(root, ARCHITECTURE)
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    tables, current = [], []
    for line in text.splitlines():
        if re.match(r"^\|[-| ]+\|$", line):
            continue  # the line under the header
        if line.startswith("|"):
            current.append([cell.strip() for cell in line.strip("|").split("|")])
        elif current:
            tables.append(current[1:])  # without the header row
            current = []
    if current:
        tables.append(current[1:])
    return tables


def check_article(root, problems, notes):
    """The article's module table says what MAY_IMPORT says, and its folder tables are FOLDER_ORDER's, in
    FOLDER_ORDER's order of modules (those with folders)."""
    tables = article_tables(root)
    if len(tables) < 2:
        notes.append(f"note: {ARCHITECTURE} has no module and folder tables to compare")
        return
    modules = tables[0]
    for row in modules:
        names = re.findall(r"`([^`]+)`", row[0])
        if not names or names[0] not in MAY_IMPORT:
            continue
        said = {name.strip() for name in row[-1].split(",")} - {"—", ""}
        if said != MAY_IMPORT[names[0]]:
            problems.append(
                f"{ARCHITECTURE}: {names[0]} may import {sorted(said)}, Tools/check-layers.py says "
                f"{sorted(MAY_IMPORT[names[0]])}")
    ordered = [module for module, ranks in FOLDER_ORDER.items() if ranks]
    if len(tables) - 1 != len(ordered):
        problems.append(f"{ARCHITECTURE}: {len(tables) - 1} folder tables, Tools/check-layers.py orders {ordered}")
    for module, table in zip(ordered, tables[1:]):
        said_order = [set(re.findall(r"`([^`]+)`", row[0])) for row in table]
        if said_order != FOLDER_ORDER[module]:
            problems.append(
                f"{ARCHITECTURE}: {module}'s folder order {said_order} is not Tools/check-layers.py's {FOLDER_ORDER[module]}")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.abspath(root)
    problems = []
    notes = []
    check_modules(root, problems)
    check_folders(root, problems, notes)
    check_article(root, problems, notes)
    for line in problems + notes:
        print(line)
    if problems:
        print(f"check-layers: {len(problems)} violation(s); {ARCHITECTURE} gives the order")
        return 1
    print("check-layers: modules and folders depend downward only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
