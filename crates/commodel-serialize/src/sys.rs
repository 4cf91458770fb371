//! The system calls the daemon needs, each behind a safe wrapper: network namespaces,
//! netlink sockets, a timer, epoll, signals, the clock and real-time scheduling.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn owned(fd: libc::c_int) -> io::Result<OwnedFd> {
    let fd = check(fd)?;
    // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Open a file read-only (a namespace handle such as /run/netns/NAME).
pub fn open(path: &str) -> io::Result<OwnedFd> {
    let c = CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a valid NUL-terminated string.
    owned(unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) })
}

/// Move this (single-threaded) process into the network namespace `ns`.
pub fn enter_netns(ns: &OwnedFd) -> io::Result<()> {
    // SAFETY: plain system call on a valid descriptor.
    check(unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) }).map(|_| ())
}

/// A non-blocking netfilter netlink socket, bound to the kernel-assigned port id.
pub struct Netlink {
    fd: OwnedFd,
}

impl Netlink {
    pub fn open(protocol: i32, recv_buffer: usize) -> io::Result<Self> {
        let kind = libc::SOCK_RAW | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
        // SAFETY: plain system call.
        let fd = owned(unsafe { libc::socket(libc::AF_NETLINK, kind, protocol) })?;
        // SAFETY: sockaddr_nl is plain data; all zero is "the kernel picks our port id".
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        let size = std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
        // SAFETY: `addr` is a valid sockaddr_nl of `size` bytes.
        check(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                &addr as *const libc::sockaddr_nl as *const libc::sockaddr,
                size,
            )
        })?;
        let sock = Netlink { fd };
        // Beyond the system's maximum with CAP_NET_ADMIN in the initial user namespace;
        // inside a user namespace (the unprivileged sandbox) up to that maximum only.
        let size = recv_buffer as i32;
        if sock
            .set_int(libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, size)
            .is_err()
        {
            sock.set_int(libc::SOL_SOCKET, libc::SO_RCVBUF, size)?;
        }
        Ok(sock)
    }

    fn set_int(&self, level: i32, name: i32, value: i32) -> io::Result<()> {
        let size = std::mem::size_of::<i32>() as libc::socklen_t;
        // SAFETY: `value` is a valid i32 of `size` bytes.
        check(unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                level,
                name,
                &value as *const i32 as *const libc::c_void,
                size,
            )
        })
        .map(|_| ())
    }

    /// Send one datagram (possibly several netlink messages).
    pub fn send(&self, data: &[u8]) -> io::Result<()> {
        // SAFETY: `data` is a valid buffer of its length.
        let n = unsafe {
            libc::send(
                self.fd.as_raw_fd(),
                data.as_ptr() as *const libc::c_void,
                data.len(),
                0,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Receive one datagram; Ok(None) when nothing is waiting.
    pub fn recv<'a>(&self, buf: &'a mut [u8]) -> io::Result<Option<&'a [u8]>> {
        // SAFETY: `buf` is a valid writable buffer of its length.
        let n = unsafe {
            libc::recv(
                self.fd.as_raw_fd(),
                buf.as_mut_ptr() as *mut libc::c_void,
                buf.len(),
                0,
            )
        };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::WouldBlock {
                return Ok(None);
            }
            return Err(err);
        }
        Ok(Some(&buf[..n as usize]))
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// CLOCK_MONOTONIC in picoseconds (the clock of every namespace on the machine).
pub fn now_ps() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64) * 1_000_000_000_000 + (ts.tv_nsec as u64) * 1000
}

/// A CLOCK_MONOTONIC timerfd armed at absolute times.
pub struct Timer {
    fd: OwnedFd,
}

impl Timer {
    pub fn new() -> io::Result<Self> {
        let flags = libc::TFD_NONBLOCK | libc::TFD_CLOEXEC;
        // SAFETY: plain system call.
        let fd = owned(unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, flags) })?;
        Ok(Timer { fd })
    }

    /// Fire at `at_ps` (CLOCK_MONOTONIC, picoseconds); None disarms.
    pub fn arm(&self, at_ps: Option<u64>) -> io::Result<()> {
        let ns = at_ps.map_or(0, |ps| ps.div_ceil(1000).max(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (ns % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: `spec` is a valid itimerspec; the old value is not asked for.
        check(unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        })
        .map(|_| ())
    }

    /// Consume an expiry (if any).
    pub fn clear(&self) {
        let mut count = [0u8; 8];
        // SAFETY: reads at most 8 bytes into `count`; EAGAIN is fine.
        unsafe { libc::read(self.fd.as_raw_fd(), count.as_mut_ptr() as *mut _, 8) };
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// An epoll set of descriptors, each registered with a token.
pub struct Epoll {
    fd: OwnedFd,
}

impl Epoll {
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain system call.
        Ok(Epoll {
            fd: owned(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?,
        })
    }

    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: `ev` is a valid epoll_event.
        check(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })
            .map(|_| ())
    }

    /// Wait for readiness; returns the tokens that are ready (EINTR gives none).
    pub fn wait(&self, events: &mut [libc::epoll_event], out: &mut Vec<u64>) -> io::Result<()> {
        out.clear();
        // SAFETY: `events` is a valid writable array of its length.
        let n = unsafe {
            libc::epoll_wait(
                self.fd.as_raw_fd(),
                events.as_mut_ptr(),
                events.len() as i32,
                -1,
            )
        };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                return Ok(());
            }
            return Err(err);
        }
        out.extend(events[..n as usize].iter().map(|e| e.u64));
        Ok(())
    }
}

/// SIGTERM, SIGINT and SIGHUP blocked and delivered through a signalfd.
pub struct Signals {
    fd: OwnedFd,
}

impl Signals {
    pub fn new() -> io::Result<Self> {
        // SAFETY: sigset_t is plain data, initialised by sigemptyset.
        let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid sigset_t for these calls.
        unsafe {
            libc::sigemptyset(&mut set);
            for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
                libc::sigaddset(&mut set, sig);
            }
            check(libc::sigprocmask(
                libc::SIG_BLOCK,
                &set,
                std::ptr::null_mut(),
            ))?;
        }
        let flags = libc::SFD_NONBLOCK | libc::SFD_CLOEXEC;
        // SAFETY: `set` is a valid sigset_t.
        let fd = owned(unsafe { libc::signalfd(-1, &set, flags) })?;
        Ok(Signals { fd })
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Run under SCHED_FIFO `priority` (0: leave the scheduling alone) with 1 ns timer slack.
pub fn set_realtime(priority: i32) -> io::Result<()> {
    // SAFETY: plain prctl call with an integer argument.
    check(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) })?;
    if priority > 0 {
        let param = libc::sched_param {
            sched_priority: priority,
        };
        // SAFETY: `param` is a valid sched_param; 0 is this process.
        check(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) })?;
    }
    Ok(())
}

/// Ask for a CPU wake-up latency of 0 for as long as the returned file stays open (the
/// kernel's PM QoS request through /dev/cpu_dma_latency; closing it, or exiting, withdraws
/// the request). Idle cores then poll instead of halting: a halted core, a virtual
/// machine's above all, takes tens of microseconds to wake for a newly queued frame. None
/// where the device cannot be opened (no root, or no such device).
pub fn hold_zero_wakeup_latency() -> Option<std::fs::File> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .ok()?;
    file.write_all(&0i32.to_ne_bytes()).ok()?;
    Some(file)
}

/// CPU time this process has used (user + system), in microseconds.
pub fn cpu_time_us() -> u64 {
    // SAFETY: rusage is plain data written by the kernel.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    us(usage.ru_utime) + us(usage.ru_stime)
}
