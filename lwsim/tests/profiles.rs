//! The built-in profiles: every one parses, every value has a source, the topologies are the
//! machines they name; a value without a source is refused.

use lwsim::profile::{BUILTIN, COST_KEYS};
use lwsim::Profile;

#[test]
fn every_builtin_profile_parses_with_a_source_for_every_value() {
    for (name, _) in BUILTIN {
        let p = Profile::builtin(name).unwrap();
        assert_eq!(&p.name, name);
        assert_eq!(p.sources.len(), COST_KEYS.len());
        for (k, s) in COST_KEYS.iter().zip(&p.sources) {
            assert!(!s.contains("placeholder"), "{name}.{k} is a placeholder");
            assert!(s.len() > 10, "{name}.{k}: {s:?}");
        }
        print!("{}", p.describe());
    }
    assert!(Profile::builtin("epyc-2s-genoa").unwrap().hw_threads() >= 128);
    let w = Profile::builtin("xeon-4s-westmere-ex").unwrap();
    assert!(w.sockets == 4 && (32..=80).contains(&w.hw_threads()));
    // A value without a source is refused.
    let text = BUILTIN[1].1.replacen("\"source\"", "\"no-source\"", 2);
    assert!(Profile::parse(&text).is_err());
}

/// `set_all` is the one parser of an override list: blanks trimmed, empty items skipped, and
/// each override returned with the profile's value before it.
#[test]
fn set_all_returns_each_override_with_the_value_before() {
    let mut p = Profile::builtin("xeon-2s-broadwell").unwrap();
    let wake = p.get("futex_wake_ns").unwrap();
    let applied = p
        .set_all(" futex_wake_ns = 1000 ,,shared_load_occupancy=0")
        .unwrap();
    assert_eq!(applied.len(), 2);
    assert_eq!(applied[0], ("futex_wake_ns".to_string(), 1000.0, wake));
    assert_eq!(applied[1].0, "shared_load_occupancy");
    assert_eq!(applied[1].1, 0.0);
    assert_eq!(p.get("futex_wake_ns"), Some(1000.0));
    assert!(p.set_all("").unwrap().is_empty());
    assert!(p.set_all("futex_wake_ns").is_err());
    assert!(p.set_all("futex_wake_ns=x").is_err());
}

/// The structural option `shared_load_llc`: 1 in the Intel profiles (an inclusive L3, their
/// `model` section with its source, since model 3), 0 in the others, switchable by `--set`'s
/// parser (and `model=2` sets 0) and by a profile's `model` section (with its source), and
/// nothing outside [0, 1]; every built-in profile gives the L3's latency for it with a source.
#[test]
fn shared_load_llc_is_set_by_name_or_by_a_profile() {
    for (name, _) in BUILTIN {
        let p = Profile::builtin(name).unwrap();
        let intel = name.starts_with("xeon-");
        assert_eq!(
            p.get("shared_load_llc"),
            Some(if intel { 1.0 } else { 0.0 }),
            "{name}"
        );
    }
    let mut p = Profile::builtin("xeon-4s-westmere-ex").unwrap();
    p.set_all("model=2").unwrap();
    assert_eq!(p.get("shared_load_llc"), Some(0.0));
    assert_eq!(p.get("llc_shared_load_ns"), Some(30.5));
    let applied = p.set_all("shared_load_llc=1").unwrap();
    assert_eq!(applied, vec![("shared_load_llc".to_string(), 1.0, 0.0)]);
    assert_eq!(p.param(lwsim::profile::model::SHARED_LOAD_LLC), 1.0);
    assert!(p
        .describe()
        .lines()
        .any(|l| l.contains("shared_load_llc") && l.contains("1.000") && l.contains("override")));
    let err = p.set_all("shared_load_llc=2").unwrap_err();
    assert!(
        err.contains("shared_load_llc") && err.contains("outside"),
        "{err}"
    );
    let text = BUILTIN
        .iter()
        .find(|(n, _)| *n == "opteron-4s-6128")
        .unwrap()
        .1
        .replacen(
            "\"model\": {",
            "\"model\": { \"shared_load_llc\": { \"value\": 1, \"source\": \"an inclusive L3\" },",
            1,
        );
    let q = Profile::parse(&text).unwrap();
    assert_eq!(q.get("shared_load_llc"), Some(1.0));
    let no_source = text.replacen("\"source\": \"an inclusive L3\"", "\"src\": \"x\"", 1);
    assert!(Profile::parse(&no_source)
        .unwrap_err()
        .contains("model.shared_load_llc.source"));
    for (name, _) in BUILTIN {
        let p = Profile::builtin(name).unwrap();
        assert!(p.get("llc_shared_load_ns").unwrap() > 0.0, "{name}");
    }
}

/// The structural option `wake_placement`: 1 (`select_idle_sibling`) in every built-in profile
/// since model 3, a structural option of two choices (so `--sensitivity` runs its other
/// choice), switchable by `--set`'s parser (`model=2` sets 0, the lowest idle core), nothing
/// outside [0, 1].
#[test]
fn wake_placement_is_select_idle_sibling_by_default() {
    for (name, _) in BUILTIN {
        let p = Profile::builtin(name).unwrap();
        assert_eq!(p.get("wake_placement"), Some(1.0), "{name}");
    }
    assert_eq!(
        lwsim::profile::structural_choices("wake_placement"),
        Some(&[0.0, 1.0][..])
    );
    let mut p = Profile::builtin("xeon-2s-broadwell").unwrap();
    let applied = p.set_all("model=2").unwrap();
    assert_eq!(
        applied.iter().map(|a| a.0.as_str()).collect::<Vec<_>>(),
        [
            "residency_after_store",
            "shared_load_llc",
            "wake_placement",
            "pair_latency"
        ]
    );
    assert_eq!(applied[2], ("wake_placement".to_string(), 0.0, 1.0));
    let err = p.set_all("model=3").unwrap_err();
    assert!(
        err.starts_with("model: \"3\"") && err.contains("defaults"),
        "{err}"
    );
    let applied = p.set_all("wake_placement=1").unwrap();
    assert_eq!(applied, vec![("wake_placement".to_string(), 1.0, 0.0)]);
    assert_eq!(p.param(lwsim::profile::model::WAKE_PLACEMENT), 1.0);
    let err = p.set_all("wake_placement=2").unwrap_err();
    assert!(
        err.contains("wake_placement") && err.contains("outside"),
        "{err}"
    );
}

/// The structural options `ownership_until_snoop` and `home_node`: off (0) unless set, by name
/// or by a profile, nothing outside [0, 1]; the hop table of `topology.hops` (the 8-socket
/// profile's: the twisted ladder, three sockets one hop away and four two hops) is checked
/// (square, symmetric, 0 on the diagonal only, with its source), and a profile without one has
/// every socket pair one hop apart.
#[test]
fn ownership_and_home_options_and_the_hop_table() {
    let mut p = Profile::builtin("xeon-8s-westmere-ex").unwrap();
    for key in ["ownership_until_snoop", "home_node"] {
        assert_eq!(p.get(key), Some(0.0), "{key}");
        assert_eq!(
            lwsim::profile::structural_choices(key),
            Some(&[0.0, 1.0][..])
        );
        let err = p.set_all(&format!("{key}=2")).unwrap_err();
        assert!(err.contains(key) && err.contains("outside"), "{err}");
    }
    assert_eq!(p.get("snoop_fraction"), Some(0.5));
    assert!(p.set_all("snoop_fraction=1.5").is_err());
    p.set_all("home_node=1,ownership_until_snoop=1").unwrap();
    assert_eq!(p.param(lwsim::profile::model::HOME_NODE), 1.0);
    assert_eq!(p.param(lwsim::profile::model::OWNERSHIP_UNTIL_SNOOP), 1.0);
    for s in 0..8 {
        let row: Vec<u64> = (0..8).map(|t| p.socket_hops(s, t)).collect();
        assert_eq!(row.iter().filter(|&&h| h == 1).count(), 3, "{row:?}");
        assert_eq!(row.iter().filter(|&&h| h == 2).count(), 4, "{row:?}");
    }
    assert!(p.describe().contains("hops 01221221 "));
    let four = Profile::builtin("xeon-4s-westmere-ex").unwrap();
    assert!(four.hops.is_empty());
    assert_eq!(four.socket_hops(0, 3), 1);
    assert_eq!(four.socket_hops(2, 2), 0);
    let text = BUILTIN
        .iter()
        .find(|(n, _)| *n == "xeon-8s-westmere-ex")
        .unwrap()
        .1;
    for (from, to, err) in [
        (
            "[0, 1, 2, 2, 1, 2, 2, 1],",
            "[0, 1, 2, 2, 1, 2, 2, 2],",
            "[0][7] != [7][0]",
        ),
        (
            "[0, 1, 2, 2, 1, 2, 2, 1],",
            "[1, 1, 2, 2, 1, 2, 2, 1],",
            "table[0][0]",
        ),
        ("[0, 1, 2, 2, 1, 2, 2, 1],", "", "expected 8 rows"),
        (
            "\"source\": \"used only under",
            "\"src\": \"",
            "hops.source",
        ),
    ] {
        let bad = text.replacen(from, to, 1);
        let got = Profile::parse(&bad).unwrap_err();
        assert!(got.contains(err), "{got}");
    }
}

/// `opteron-4s-6128`: four packages of two 4-core dies, no SMT; a die is the L3 domain, so a
/// transfer within a die, to the package's other die and to another package are SSYNC's three
/// Opteron classes, in that order.
#[test]
fn opteron_6128_has_two_dies_per_package() {
    let p = Profile::builtin("opteron-4s-6128").unwrap();
    assert_eq!((p.sockets, p.cores_per_socket), (4, 8));
    assert_eq!((p.threads_per_core, p.cores_per_l3), (1, 4));
    assert_eq!(p.hw_threads(), 32);
    let (die, mcm, remote) = (
        p.transfer_ps(0, 3),
        p.transfer_ps(0, 4),
        p.transfer_ps(0, 8),
    );
    assert_eq!(die, (p.get("transfer_l3_ns").unwrap() * 1000.0) as u64);
    assert_eq!(mcm, (p.get("transfer_socket_ns").unwrap() * 1000.0) as u64);
    assert_eq!(
        remote,
        (p.get("transfer_remote_ns").unwrap() * 1000.0) as u64
    );
    assert!(die < mcm && mcm < remote, "{die} {mcm} {remote}");
    assert_eq!(p.transfer_ps(4, 7), die);
    assert_eq!(p.transfer_ps(31, 24), mcm);
}

/// The measured pair matrices (`topology.pair_matrix`, structural option `pair_latency`): the
/// option is 1 (since model 3) in every built-in profile with a matrix, 0 in the others, and has
/// two choices; `xeon-2s-e5-2680v4`'s matrix is
/// 56 x 56 and symmetric, its CPU numbering lwsim's (every SMT pair, c and c + 28, below every
/// same-socket pair, below every cross-socket pair; so in every built-in matrix, the
/// `xeon-2s-e5-2660`'s the closest published part's); `xeon-2s-broadwell`'s matrix has this
/// profile's class figures as its class medians (the conversion that made them: one-way ns, the
/// profile's 118.0 ns the README's whole-ns median of 118.07); a profile without a matrix
/// refuses `pair_latency=1` naming itself, by `--set`'s parser and in its JSON; a bad matrix file
/// is refused naming the file and line.
#[test]
fn pair_matrices_and_pair_latency_needs_one() {
    use lwsim::profile::{cost, structural_choices};
    for (name, _) in BUILTIN {
        let p = Profile::builtin(name).unwrap();
        let matrix = !p.pairs.is_empty();
        assert_eq!(
            p.get("pair_latency"),
            Some(if matrix { 1.0 } else { 0.0 }),
            "{name}"
        );
    }
    let with_matrix: Vec<_> = BUILTIN
        .iter()
        .filter(|(n, _)| !Profile::builtin(n).unwrap().pairs.is_empty())
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(
        with_matrix,
        ["xeon-2s-broadwell", "xeon-2s-e5-2680v4", "xeon-2s-e5-2660"]
    );
    assert_eq!(structural_choices("pair_latency"), Some(&[0.0, 1.0][..]));
    let p = Profile::builtin("xeon-2s-e5-2680v4").unwrap();
    assert_eq!(p.pairs.len(), 56 * 56);
    assert!(p.describe().contains("pairs 56x56 measured"));
    let (mut smt, mut same, mut cross) = (Vec::new(), Vec::new(), Vec::new());
    for a in 0..56 {
        assert_eq!(p.pair_ps(a, a), None);
        for b in 0..a {
            let v = p.pair_ps(a, b).unwrap();
            assert_eq!(p.pair_ps(b, a), Some(v), "({a}, {b})");
            let (sa, _, ca) = p.place(a);
            let (sb, _, cb) = p.place(b);
            if ca == cb {
                smt.push(v);
            } else if sa == sb {
                same.push(v);
            } else {
                cross.push(v);
            }
        }
    }
    assert_eq!((smt.len(), same.len(), cross.len()), (28, 728, 784));
    let max = |v: &[u64]| *v.iter().max().unwrap();
    let min = |v: &[u64]| *v.iter().min().unwrap();
    assert!(max(&smt) < min(&same) && max(&same) < min(&cross));
    assert_eq!((min(&smt), max(&smt)), (7_900, 11_600));
    assert_eq!((min(&same), max(&same)), (33_400, 55_100));
    assert_eq!((min(&cross), max(&cross)), (115_400, 145_000));
    // Every built-in matrix: its CPU numbering is lwsim's (its classes do not overlap).
    let mut with = Vec::new();
    for (name, _) in BUILTIN {
        let q = Profile::builtin(name).unwrap();
        if q.pairs.is_empty() {
            continue;
        }
        with.push(*name);
        let n = q.hw_threads();
        assert_eq!(q.pairs.len(), n * n, "{name}");
        let mut top = [0u64; 4];
        let mut bottom = [u64::MAX; 4];
        for a in 0..n {
            for b in 0..a {
                let v = q.pair_ps(a, b).unwrap();
                assert_eq!(q.pair_ps(b, a), Some(v), "{name} ({a}, {b})");
                let class = match q.transfer_ps(a, b) {
                    x if x == q.ps(cost::TRANSFER_SMT) => 0,
                    x if x == q.ps(cost::TRANSFER_REMOTE) => 2,
                    _ => 1,
                };
                top[class] = top[class].max(v);
                bottom[class] = bottom[class].min(v);
            }
        }
        assert!(
            top[0] < bottom[1] && top[1] < bottom[2],
            "{name}: {bottom:?} {top:?}"
        );
    }
    assert_eq!(
        with,
        vec!["xeon-2s-broadwell", "xeon-2s-e5-2680v4", "xeon-2s-e5-2660"]
    );

    // The conversion: a profile whose class figures came from its matrix gets them back as the
    // matrix's class medians.
    let bw = Profile::builtin("xeon-2s-broadwell").unwrap();
    let n = bw.hw_threads();
    let mut by_class: [Vec<u64>; 3] = Default::default();
    for a in 0..n {
        for b in 0..a {
            let class = match bw.transfer_ps(a, b) {
                x if x == bw.ps(cost::TRANSFER_SMT) => 0,
                x if x == bw.ps(cost::TRANSFER_L3) => 1,
                _ => 2,
            };
            by_class[class].push(bw.pair_ps(a, b).unwrap());
        }
    }
    for (v, key) in by_class.iter_mut().zip(["smt", "l3", "remote"]) {
        v.sort();
        let median = (v[(v.len() - 1) / 2] + v[v.len() / 2]) / 2;
        let class = bw.get(&format!("transfer_{key}_ns")).unwrap();
        let class_ps = (class * 1000.0).round() as u64;
        println!("{key}: matrix median {median} ps, profile {class_ps} ps");
        assert!(
            median.abs_diff(class_ps) <= 100,
            "{key}: {median} against {class_ps}"
        );
    }

    // No matrix: an error naming the profile, never the classes instead.
    let mut w = Profile::builtin("xeon-4s-westmere-ex").unwrap();
    assert!(w.pairs.is_empty() && w.pair_ps(0, 1).is_none());
    let err = w.set_all("pair_latency=1").unwrap_err();
    assert!(
        err.contains("xeon-4s-westmere-ex") && err.contains("no measured pair matrix"),
        "{err}"
    );
    assert!(
        err.contains("xeon-2s-e5-2680v4"),
        "names the profiles that have one: {err}"
    );
    w.set_all("pair_latency=0").unwrap();
    let text = BUILTIN
        .iter()
        .find(|(n, _)| *n == "xeon-4s-westmere-ex")
        .unwrap()
        .1;
    let with_option = text.replacen(
        "\"model\": {",
        "\"model\": { \"pair_latency\": { \"value\": 1, \"source\": \"x\" },",
        1,
    );
    let err = Profile::parse(&with_option).unwrap_err();
    assert!(
        err.contains("model.pair_latency") && err.contains("xeon-4s-westmere-ex"),
        "{err}"
    );

    // Bad matrix sections and files.
    let text = BUILTIN
        .iter()
        .find(|(n, _)| *n == "xeon-2s-e5-2680v4")
        .unwrap()
        .1;
    let renamed = text.replacen("matrices/xeon-2s-e5-2680v4.csv", "matrices/none.csv", 1);
    assert!(Profile::parse(&renamed)
        .unwrap_err()
        .contains("matrices/none.csv: not a built-in matrix"));
    let dir = std::env::temp_dir().join(format!("lwsim-pairs-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("matrices")).unwrap();
    let json = dir.join("p.json");
    std::fs::write(&json, text).unwrap();
    let good = lwsim::profile::BUILTIN_MATRICES[0].1;
    let csv = dir.join("matrices/xeon-2s-e5-2680v4.csv");
    std::fs::write(&csv, good).unwrap();
    assert_eq!(Profile::load(json.to_str().unwrap()).unwrap(), p);
    let header = good.lines().take_while(|l| l.starts_with('#')).count();
    for (bad, want) in [
        (
            good.replacen("\n512\n", "\n512,1\n", 1),
            "has 2 values, expected 1",
        ),
        (good.replacen("\n512\n", "\nx\n", 1), "\"x\" (threads 1, 0)"),
        (good.replacen("\n512\n", "\n0\n", 1), "\"0\" (threads 1, 0)"),
        (
            good.replacen("\n512\n", "\n", 1),
            "has 2 values, expected 1",
        ),
        (
            good.lines()
                .take(header + 10)
                .collect::<Vec<_>>()
                .join("\n"),
            "10 rows, expected 55",
        ),
    ] {
        std::fs::write(&csv, bad).unwrap();
        let err = Profile::load(json.to_str().unwrap()).unwrap_err();
        assert!(
            err.contains("xeon-2s-e5-2680v4.csv") && err.contains(want),
            "{err}"
        );
    }
    let line = header + 1;
    std::fs::write(&csv, good.replacen("\n512\n", "\n512,1\n", 1)).unwrap();
    let err = Profile::load(json.to_str().unwrap()).unwrap_err();
    assert!(err.contains(&format!("line {line}:")), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Under `pair_latency` 1 an override of a transfer class's key scales that class's measured
/// pairs by the same ratio (so `--set` and `--sensitivity` on `transfer_*_ns` move the transfers
/// of a profile with a matrix): doubling `transfer_l3_ns` on `xeon-2s-e5-2680v4` doubles every
/// same-socket pair and leaves the SMT and cross-socket pairs as measured.
#[test]
fn a_class_override_scales_that_class_of_measured_pairs() {
    let p = Profile::builtin("xeon-2s-e5-2680v4").unwrap();
    let mut q = p.clone();
    q.set_all("transfer_l3_ns=87").unwrap();
    let (same, smt, cross) = ((1, 2), (0, 28), (0, 14));
    assert_eq!(
        p.transfer_class(same.0, same.1),
        lwsim::profile::cost::TRANSFER_L3
    );
    let v = |p: &Profile, (a, b): (usize, usize)| p.pair_ps(a, b).unwrap();
    assert_eq!(v(&q, same), 2 * v(&p, same));
    assert_eq!(v(&q, smt), v(&p, smt));
    assert_eq!(v(&q, cross), v(&p, cross));
    let mut r = p.clone();
    r.set_all("transfer_remote_ns=59").unwrap();
    assert_eq!(v(&r, cross), (v(&p, cross) as f64 / 2.0).round() as u64);
    assert_eq!(v(&r, same), v(&p, same));
    // Overrides compose from the measured matrix: a class set to 0 and back is as measured.
    let mut z = p.clone();
    z.set_all("transfer_l3_ns=0").unwrap();
    assert_eq!(v(&z, same), 0);
    z.set_all("transfer_l3_ns=43.5").unwrap();
    assert_eq!(v(&z, same), v(&p, same));
}
