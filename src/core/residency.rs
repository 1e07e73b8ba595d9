//! Where a dat's valid bytes are, on a backend with device memory (PyOP2's residency rule, in
//! three states: the two "only" states and "both"; a device copy that does not exist yet is
//! treated as stale). Pure: the driver and `Context::host_data` apply the moves it asks for.
//! Host backends never call it: their host bytes are the only copy.

/// Which copies of a dat hold its current values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Residency {
    /// Only the host copy is current (the device copy is stale or was never made).
    Host,
    /// Only the device copy is current.
    Device,
    /// Both copies are current.
    Both,
}

/// What a loop must do with a dat before running on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Before {
    /// Nothing: the device copy is current.
    Nothing,
    /// Copy host to device.
    Upload,
    /// Make room on the device only: the loop writes every element without reading any (a
    /// direct OP_WRITE over the whole set).
    Allocate,
}

/// The move before a loop that uses the dat; `overwrites_all`: every argument on this dat is a
/// direct OP_WRITE over the whole set.
pub fn before_loop(state: Residency, overwrites_all: bool) -> Before {
    match state {
        Residency::Device | Residency::Both => Before::Nothing,
        Residency::Host if overwrites_all => Before::Allocate,
        Residency::Host => Before::Upload,
    }
}

/// The state after a loop on the device (the move `before_loop` asked for has happened).
pub fn after_loop(state: Residency, writes: bool) -> Residency {
    if writes {
        Residency::Device
    } else {
        match state {
            Residency::Host => Residency::Both,
            s => s,
        }
    }
}

/// Host access to a dat: whether to download first, and the state afterwards. `writes`: the
/// host changes the bytes (the device copy becomes stale).
pub fn host_access(state: Residency, writes: bool) -> (bool, Residency) {
    let download = state == Residency::Device;
    let after = if writes { Residency::Host } else { Residency::Both };
    (download, if state == Residency::Host { Residency::Host } else { after })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Residency::*;

    /// The whole table: fetch after a device write downloads once; a second fetch does not; a
    /// direct WRITE over the whole set never uploads; a read-only loop leaves both valid.
    #[test]
    fn transitions() {
        assert_eq!(before_loop(Host, false), Before::Upload);
        assert_eq!(before_loop(Host, true), Before::Allocate);
        assert_eq!(before_loop(Device, false), Before::Nothing);
        assert_eq!(before_loop(Both, false), Before::Nothing);
        assert_eq!(after_loop(Host, false), Both);
        assert_eq!(after_loop(Host, true), Device);
        assert_eq!(after_loop(Both, true), Device);
        assert_eq!(after_loop(Both, false), Both);
        assert_eq!(host_access(Device, false), (true, Both));
        assert_eq!(host_access(Both, false), (false, Both));
        assert_eq!(host_access(Both, true), (false, Host));
        assert_eq!(host_access(Device, true), (true, Host));
        assert_eq!(host_access(Host, false), (false, Host));
    }
}
