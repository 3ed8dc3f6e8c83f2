"""A small seccomp filter for the strict box: refuse the syscalls that are kernel attack surface, not tools.

Namespaces and dropped capabilities already stop the box from mounting, loading modules or rebooting. What they leave
open are interfaces that unprivileged code may use and that have been the door for kernel exploits: io_uring, the
keyring, bpf, perf events, userfaultfd, and the 32-bit and x32 syscall entry points (Docker's default profile refuses
most of the same calls). The filter is classic BPF, written here in a couple of dozen instructions so there is no
libseccomp to install; bwrap loads it (``--seccomp FD``) after it has set the box up and before it executes the
command. Refused calls fail with EPERM, which programs treat as "not available here". Only x86-64 has a table;
elsewhere there is no filter and :func:`deny_program` says so by returning None.
"""

from __future__ import annotations

import platform
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
EPERM = 1
# struct seccomp_data: int nr; u32 arch; ...
_LD_NR, _LD_ARCH = (0x20, 0, 0, 0), (0x20, 0, 0, 4)  # BPF_LD | BPF_W | BPF_ABS
_JEQ, _JGE, _RET = 0x15, 0x35, 0x06

DENIED_X86_64 = {
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "add_key": 248, "request_key": 249, "keyctl": 250,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
    "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176,
    "syslog": 103,
}


def deny_program() -> bytes | None:
    """The compiled filter (struct sock_filter[]), or None where tomo has no syscall table for this machine."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    numbers = sorted(DENIED_X86_64.values())
    deny_at = 6 + len(numbers)  # the last instruction: 5 of preamble, one test per number, allow, deny
    program: list[tuple[int, int, int, int]] = [
        _LD_ARCH,
        (_JEQ, 1, 0, AUDIT_ARCH_X86_64),  # other ABIs (i386 via int 0x80) are refused whole
        (_RET, 0, 0, SECCOMP_RET_ERRNO | EPERM),
        _LD_NR,
        (_JGE, deny_at - 5, 0, X32_SYSCALL_BIT),  # the x32 ABI
    ]
    for offset, number in enumerate(numbers):
        index = 5 + offset
        program.append((_JEQ, deny_at - index - 1, 0, number))
    program.append((_RET, 0, 0, SECCOMP_RET_ALLOW))
    program.append((_RET, 0, 0, SECCOMP_RET_ERRNO | EPERM))
    assert len(program) == deny_at + 1
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)
