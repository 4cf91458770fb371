//! Coverage-guided fuzzing of the GOAL reader: any bytes give Ok or Err, never a panic,
//! and what is accepted survives a write/read round trip unchanged.
#![no_main]

use commodel_engine::goal;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match goal::parse_bytes(data, "fuzz.goal") {
        Ok(schedule) => {
            let text = goal::write(&schedule);
            let back = match goal::parse(&text, "rewritten.goal") {
                Ok(back) => back,
                Err(e) => panic!("the writer's output does not parse: {e}\n{text}"),
            };
            assert_eq!(goal::write(&back), text);
            assert!(schedule.edges().eq(back.edges()));
        }
        Err(e) => {
            let (line, column) = e.position().unwrap_or((0, 0));
            assert!(line >= 1 && column >= 1, "{e}");
        }
    }
});
