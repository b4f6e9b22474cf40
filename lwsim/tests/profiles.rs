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
