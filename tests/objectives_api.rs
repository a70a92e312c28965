//! The objectives as Burn components (issue 40): each built from its `#[derive(Config)]`
//! config, one `forward` per step whose parameter gradients are those of the CPU interface
//! (`batch_gradient` + the surrogate bridge) and whose value is the batch loss, its state a
//! Burn record that continues bit for bit after a round trip through burnpack bytes, its
//! config a JSON round trip, its defaults LibAUC 2.0.1's.

use burn::config::Config;
use burn::module::Param;
use burn::optim::GradientsParams;
use burn::store::ModuleRecord;
use burn::tensor::{Device, Int, Tensor, TensorData};
use rankrisk::backend::{BackendKind, autodiff_device};
use rankrisk::bridge::{scores_to_cpu, surrogate};
use rankrisk::pauc::agd::AgdSbcdConfig;
use rankrisk::train::deep_sbcd::DeepSbcdInit;
use rankrisk::train::{
    AucMConfig, BurnObjective, DeepAdmmConfig, ErmConfig, MiniBatchPaucConfig, Objective,
    PauciConfig, SopaConfig, SopaSConfig, SotaSConfig, StacoConfig, TrainError, UpauciConfig,
};
use rankrisk::weights::Weights;

/// 12 training samples (ids 0..12), 5 positives.
const LABELS: [f64; 12] = [
    1.0, -1.0, -1.0, 1.0, -1.0, 1.0, -1.0, -1.0, 1.0, -1.0, 1.0, -1.0,
];

/// A batch of the training set: its ids and scores that move with `step`.
fn batch(step: usize) -> (Vec<usize>, Vec<f32>) {
    let ids: Vec<usize> = (0..8).map(|k| (k * 5 + step * 3) % 12).collect();
    let scores = ids
        .iter()
        .map(|&i| ((i * 7 + step * 11) % 13) as f32 / 4.0 - 1.5)
        .collect();
    (ids, scores)
}

fn device() -> Device {
    autodiff_device(BackendKind::Flex).unwrap()
}

/// The batch as Burn tensors: scores as a trainable leaf, 0/1 targets, ids.
fn tensors(ids: &[usize], scores: &[f32]) -> (Param<Tensor<1>>, Tensor<1, Int>, Tensor<1, Int>) {
    let d = device();
    let n = ids.len();
    let s = Param::from_tensor(Tensor::<1>::from_data(
        TensorData::new(scores.to_vec(), [n]),
        &d,
    ));
    let t: Vec<i64> = ids.iter().map(|&i| i64::from(LABELS[i] > 0.0)).collect();
    let i: Vec<i64> = ids.iter().map(|&i| i as i64).collect();
    (
        s,
        Tensor::from_data(TensorData::new(t, [n]), &d),
        Tensor::from_data(TensorData::new(i, [n]), &d),
    )
}

fn grad_of(grads: &GradientsParams, p: &Param<Tensor<1>>) -> Vec<f32> {
    grads
        .get::<1>(p.id)
        .unwrap()
        .into_data()
        .try_into_vec()
        .unwrap()
}

/// `forward` against `batch_gradient` + `surrogate` on the same batch from the same state:
/// the same gradients, the loss as the value, and the same state after.
fn forward_is_the_cpu_interface<O: Objective + Clone + PartialEq + std::fmt::Debug>(
    name: &str,
    objective: O,
) {
    let (mut a, mut b) = (objective.clone(), objective);
    for step in 0..4 {
        let (ids, scores) = batch(step);
        let (s, targets, id_tensor) = tensors(&ids, &scores);
        let loss = a.forward(s.val(), targets, id_tensor).unwrap();
        let value: f32 = loss.clone().into_scalar();
        let via_forward = grad_of(&GradientsParams::from_grads(loss.backward(), &s), &s);

        let s2 = tensors(&ids, &scores).0;
        let cpu = scores_to_cpu(s2.val()).unwrap();
        let labels: Vec<f64> = ids.iter().map(|&i| LABELS[i]).collect();
        let g = b.batch_gradient(&cpu, &labels, &ids).unwrap();
        let sur = surrogate(s2.val(), &g.grad).unwrap();
        let via_cpu = grad_of(&GradientsParams::from_grads(sur.backward(), &s2), &s2);

        assert_eq!(via_forward, via_cpu, "{name}, step {step}: gradients");
        assert!(
            via_cpu.iter().any(|v| v.abs() > 1e-6),
            "{name}, step {step}: a trivial gradient"
        );
        assert_eq!(value, g.loss as f32, "{name}, step {step}: the loss value");
        assert_eq!(a, b, "{name}, step {step}: the state after the step");
    }
}

#[test]
fn forward_gives_the_gradients_and_loss_of_the_cpu_interface() {
    forward_is_the_cpu_interface("ERM", ErmConfig::new().init(&LABELS).unwrap());
    forward_is_the_cpu_interface(
        "MB",
        MiniBatchPaucConfig::new(0.0, 0.5).init(&LABELS).unwrap(),
    );
    forward_is_the_cpu_interface("SOPA", SopaConfig::new(0.5).init(&LABELS).unwrap());
    forward_is_the_cpu_interface("SOPA-s", SopaSConfig::new().init(&LABELS).unwrap());
    forward_is_the_cpu_interface("SOTA-s", SotaSConfig::new().init(&LABELS).unwrap());
    forward_is_the_cpu_interface("AUC-M", AucMConfig::new().init(&LABELS).unwrap());
    forward_is_the_cpu_interface("STACO", StacoConfig::new().init(&LABELS).unwrap());
    forward_is_the_cpu_interface("PAUCI", PauciConfig::new().init(&LABELS).unwrap());
    forward_is_the_cpu_interface("UPAUCI", UpauciConfig::new().init(&LABELS).unwrap());
}

#[test]
fn forward_refuses_bad_targets_and_ids_with_the_objectives_error() {
    let mut sopa = SopaConfig::new(0.5).init(&LABELS).unwrap();
    let d = device();
    let s = Tensor::<1>::from_data(TensorData::new(vec![0.1f32, 0.2], [2]), &d);
    let int = |v: Vec<i64>| Tensor::<1, Int>::from_data(TensorData::new(v, [2]), &d);
    let e = sopa
        .forward(s.clone(), int(vec![1, 2]), int(vec![0, 1]))
        .unwrap_err();
    assert!(
        matches!(e, TrainError::BadTarget { index: 1, value: 2 }),
        "{e}"
    );
    // ±1 targets are named as what they are, not as "-1, expected -1 or +1".
    let e = sopa
        .forward(s.clone(), int(vec![1, -1]), int(vec![0, 1]))
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("target 1 is -1: forward takes Burn's"),
        "{e}"
    );
    // A batch whose labels disagree with the training set's for the same ids (another set, a
    // validation batch) is named so.
    let labels: Vec<f64> = LABELS.to_vec();
    let (first_pos, first_neg) = (
        labels.iter().position(|&y| y > 0.0).unwrap(),
        labels.iter().position(|&y| y <= 0.0).unwrap(),
    );
    let e = sopa
        .batch_gradient(&[0.1, 0.2], &[-1.0, 1.0], &[first_pos, first_neg])
        .unwrap_err();
    assert!(
        matches!(e, TrainError::LabelDisagrees { index: 0, training, .. } if training == 1.0),
        "{e}"
    );
    assert!(e.to_string().contains("a validation batch"), "{e}");
    let e = sopa
        .forward(s.clone(), int(vec![1, 0]), int(vec![0, -4]))
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("the id -4 at position 1 is negative"),
        "{e}"
    );
    let e = sopa
        .forward(s.clone(), int(vec![1, 0]), int(vec![0, 99]))
        .unwrap_err();
    assert!(
        matches!(e, TrainError::IdOutOfRange { id: 99, n: 12 }),
        "{e}"
    );
    // Targets on another backend than the scores: an error naming both devices (Burn's
    // dispatch panicked with "Tensor is on the wrong backend"); on the scores' device without
    // autodiff they are welcome.
    let ndarray = rankrisk::backend::device(BackendKind::Ndarray).unwrap();
    let elsewhere = Tensor::<1, Int>::from_data(TensorData::new(vec![1i64, 0], [2]), &ndarray);
    let e = sopa
        .forward(s.clone(), elsewhere, int(vec![0, 1]))
        .unwrap_err();
    assert!(e.to_string().contains("the batch's targets are on"), "{e}");
    let plain = rankrisk::backend::device(BackendKind::Flex).unwrap();
    let inner = |v: Vec<i64>| Tensor::<1, Int>::from_data(TensorData::new(v, [2]), &plain);
    assert!(
        sopa.forward(s, inner(vec![1, 0]), inner(vec![0, 1]))
            .is_ok()
    );
}

/// Train `steps` steps from `from` through the CPU interface.
fn train<O: Objective>(o: &mut O, from: usize, steps: usize) {
    for step in from..from + steps {
        let (ids, scores) = batch(step);
        let s: Vec<f64> = scores.iter().map(|&v| f64::from(v)).collect();
        let labels: Vec<f64> = ids.iter().map(|&i| LABELS[i]).collect();
        o.batch_gradient(&s, &labels, &ids).unwrap();
    }
}

/// Ten steps after a save and load through burnpack bytes equal ten steps without them.
fn record_round_trip<O: Objective + Clone + PartialEq + std::fmt::Debug>(
    name: &str,
    fresh: impl Fn() -> O,
) {
    let mut original = fresh();
    train(&mut original, 0, 5);
    let bytes = original.clone().into_record().into_bytes().unwrap();
    let record = ModuleRecord::from_bytes(bytes).unwrap();
    let mut loaded = fresh().try_load_record(record).unwrap();
    assert_eq!(loaded, original, "{name}: the loaded state");
    assert_ne!(loaded, fresh(), "{name}: the state moved in 5 steps");
    train(&mut original, 5, 10);
    train(&mut loaded, 5, 10);
    assert_eq!(loaded, original, "{name}: ten steps after the load");
}

#[test]
fn records_continue_bit_for_bit_after_a_burnpack_round_trip() {
    record_round_trip("SOPA", || SopaConfig::new(0.5).init(&LABELS).unwrap());
    record_round_trip("SOPA-s", || SopaSConfig::new().init(&LABELS).unwrap());
    record_round_trip("SOTA-s", || SotaSConfig::new().init(&LABELS).unwrap());
    record_round_trip("AUC-M", || AucMConfig::new().init(&LABELS).unwrap());
    record_round_trip("STACO", || StacoConfig::new().init(&LABELS).unwrap());
    record_round_trip("PAUCI", || {
        PauciConfig::new().with_alpha(0.5).init(&LABELS).unwrap()
    });
    record_round_trip("UPAUCI", || {
        UpauciConfig::new().with_alpha(0.5).init(&LABELS).unwrap()
    });
    // The stateless objectives round-trip a record of their settings alone.
    let erm = ErmConfig::new().init(&LABELS).unwrap();
    let record = ModuleRecord::from_bytes(erm.clone().into_record().into_bytes().unwrap()).unwrap();
    assert_eq!(erm.clone().try_load_record(record).unwrap(), erm);
}

#[test]
fn the_deep_admm_state_round_trips_exactly() {
    let cfg = DeepAdmmConfig::new(Weights::Cvar { q: 0.5 }).with_l2(1e-3);
    let mut admm = cfg.init(&LABELS).unwrap();
    let u: Vec<f64> = (0..12).map(|i| (i as f64 * 0.37).sin()).collect();
    admm.outer_step(&u).unwrap();
    train(&mut admm, 0, 3);
    admm.outer_step(&u.iter().map(|v| v * 0.5).collect::<Vec<_>>())
        .unwrap();
    let record =
        ModuleRecord::from_bytes(admm.clone().into_record().into_bytes().unwrap()).unwrap();
    let loaded = cfg.init(&LABELS).unwrap().try_load_record(record).unwrap();
    assert_eq!(loaded.state, admm.state);
    assert!(admm.state.k == 2 && admm.state.z.iter().any(|&z| z != 0.0));
}

#[test]
fn a_record_of_another_objective_or_training_set_is_refused() {
    let mut sopa = SopaConfig::new(0.5).init(&LABELS).unwrap();
    train(&mut sopa, 0, 3);
    let record = || sopa.clone().into_record();
    let e = SopaSConfig::new()
        .init(&LABELS)
        .unwrap()
        .try_load_record(record())
        .unwrap_err();
    assert!(e.to_string().starts_with("SOPA-s's record:"), "{e}");
    let e = ErmConfig::new()
        .init(&LABELS)
        .unwrap()
        .try_load_record(record())
        .unwrap_err();
    assert!(e.to_string().starts_with("ERM's record:"), "{e}");
    // Another training set: 3 positives, not 5.
    let e = SopaConfig::new(0.5)
        .init(&[1.0, 1.0, 1.0, -1.0])
        .unwrap()
        .try_load_record(record())
        .unwrap_err();
    assert!(e.to_string().contains("another training set"), "{e}");
    // Another training set with as many positives (its labels in another order): the
    // fingerprint of the labels tells.
    let mut shuffled = LABELS;
    shuffled.rotate_left(1);
    let e = SopaConfig::new(0.5)
        .init(&shuffled)
        .unwrap()
        .try_load_record(record())
        .unwrap_err();
    assert!(
        e.to_string().contains("another training set")
            && e.to_string().contains("the same counts, other labels"),
        "{e}"
    );
    // The same set with other settings: the setting is named with both values.
    let e = SopaConfig::new(0.1)
        .init(&LABELS)
        .unwrap()
        .try_load_record(record())
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("`beta` is 0.5 in the record, 0.1 in this SOPA"),
        "{e}"
    );
    let e = SopaConfig::new(0.5)
        .with_eta(0.5)
        .init(&LABELS)
        .unwrap()
        .try_load_record(record())
        .unwrap_err();
    assert!(e.to_string().contains("`eta` is 0.1 in the record"), "{e}");
    // A setting that is not a number is named too.
    let mb = MiniBatchPaucConfig::new(0.05, 0.5).init(&LABELS).unwrap();
    let e = MiniBatchPaucConfig::new(0.05, 0.5)
        .with_loss(rankrisk::pauc::objective::PairLoss::SquaredHinge)
        .init(&LABELS)
        .unwrap()
        .try_load_record(mb.into_record())
        .unwrap_err();
    assert!(e.to_string().contains("`loss` differs"), "{e}");
    // A record of the state alone (written before records held the settings) still loads.
    let old = {
        use burn::module::Module;
        rankrisk::train::state_record::StateVectors::of(&sopa.state()).into_record()
    };
    let loaded = SopaConfig::new(0.5)
        .init(&LABELS)
        .unwrap()
        .try_load_record(old);
    assert_eq!(loaded.unwrap(), sopa);
    // The panicking form, as Burn's Module::load_record.
    let refused = std::panic::catch_unwind(|| {
        SopaConfig::new(0.1)
            .init(&LABELS)
            .unwrap()
            .load_record(record())
    });
    assert!(refused.is_err());
    let loaded = SopaConfig::new(0.5)
        .init(&LABELS)
        .unwrap()
        .load_record(record());
    assert_eq!(loaded, sopa);
}

#[test]
fn configs_round_trip_as_json_and_default_to_libauc() {
    let sopa = SopaConfig::new(0.3).with_eta(0.05);
    let back = SopaConfig::load_binary(sopa.to_string().as_bytes()).unwrap();
    assert_eq!((back.beta, back.margin, back.eta), (0.3, 1.0, 0.05));
    // The core crate's configs (no Burn in them) fill an absent defaulted key with its default,
    // refuse an absent required one by name, and sit in a Burn config as a field.
    let back = SopaConfig::load_binary(br#"{"beta": 0.25}"#).unwrap();
    assert_eq!((back.beta, back.margin, back.eta), (0.25, 1.0, 0.1));
    let e = SopaConfig::load_binary(br#"{"eta": 0.2}"#).unwrap_err();
    assert!(e.to_string().contains("beta"), "{e}");
    #[derive(burn::config::Config, Debug)]
    struct Training {
        objective: SopaConfig,
        #[config(default = 3)]
        epochs: usize,
    }
    let t = Training::new(SopaConfig::new(0.3).with_margin(0.5)).with_epochs(5);
    let back = Training::load_binary(t.to_string().as_bytes()).unwrap();
    assert_eq!((back.objective, back.epochs), (t.objective.clone(), 5));
    // The settings a record holds are those Burn's derive gave the same fields (SOPA's config
    // was `#[derive(Config)]` until 2026-11-27): records saved before load after.
    #[derive(burn::config::Config, Debug)]
    struct BurnSopa {
        beta: f64,
        #[config(default = 1.0)]
        margin: f64,
        #[config(default = 0.1)]
        eta: f64,
    }
    let labels = [1.0, -1.0, -1.0, 1.0];
    assert_eq!(
        rankrisk::train::Provenance::new(&BurnSopa::new(0.3).with_eta(0.05), &labels).unwrap(),
        rankrisk::train::Provenance::new(&SopaConfig::new(0.3).with_eta(0.05), &labels).unwrap()
    );
    let sota = SotaSConfig::new().with_tau(2.0);
    let back = SotaSConfig::load_binary(sota.to_string().as_bytes()).unwrap();
    assert_eq!(back.to_string(), sota.to_string());
    let aucm = AucMConfig::new().with_imratio(Some(0.2));
    let back = AucMConfig::load_binary(aucm.to_string().as_bytes()).unwrap();
    assert_eq!(back.imratio, Some(0.2));
    let admm = DeepAdmmConfig::new(Weights::Cvar { q: 0.9 }).with_l2(1e-4);
    let back = DeepAdmmConfig::load_binary(admm.to_string().as_bytes()).unwrap();
    assert_eq!(back.to_string(), admm.to_string());
    let mb = MiniBatchPaucConfig::new(0.05, 0.5);
    let back = MiniBatchPaucConfig::load_binary(mb.to_string().as_bytes()).unwrap();
    assert_eq!(back.to_string(), mb.to_string());
    let sbcd = AgdSbcdConfig::new(0.1, 0.3).with_c_dual(Some(0.5));
    let back = AgdSbcdConfig::load_binary(sbcd.to_string().as_bytes()).unwrap();
    assert_eq!(back, sbcd);
    // Section 6.1's deep settings: I = J = 16, T_k = 50 (k+1)^2, mu and gamma scales 1e3,
    // c = 0.1, 30 batch-norm refresh passes.
    let c = AgdSbcdConfig::new(0.05, 0.5);
    assert_eq!(
        (
            c.i,
            c.j,
            c.t_scale,
            c.mu_scale,
            c.gamma_scale,
            c.c,
            c.refresh_steps
        ),
        (16, 16, 50, 1e3, 1e3, 0.1, 30)
    );

    // LibAUC 2.0.1's constructors: pAUC_CVaR_Loss(margin=1.0, beta=0.2, eta=0.1),
    // pAUC_DRO_Loss(gamma=0.9, margin=1.0, Lambda=1.0), tpAUC_KL_Loss(tau=1.0, Lambda=1.0,
    // gammas=(0.9, 0.9), margin=1.0), AUCMLoss(margin=1.0) with PESG(lr=0.1,
    // epoch_decay=2e-3, weight_decay=1e-5).
    let c = SopaConfig::new(0.2);
    assert_eq!((c.margin, c.eta), (1.0, 0.1));
    let c = SopaSConfig::new();
    assert_eq!((c.lambda, c.gamma, c.margin), (1.0, 0.9, 1.0));
    let c = SotaSConfig::new();
    assert_eq!(
        (c.lambda, c.tau, c.gamma_u, c.gamma_v, c.margin),
        (1.0, 1.0, 0.9, 0.9, 1.0)
    );
    let c = AucMConfig::new();
    assert_eq!(
        (c.imratio, c.margin, c.lr, 1.0 / c.gamma, c.weight_decay),
        (None, 1.0, 0.1, 2e-3, 1e-5)
    );
}

#[test]
fn configs_refuse_settings_out_of_range_and_one_class_labels() {
    assert!(SopaConfig::new(1.5).init(&LABELS).is_err());
    assert!(SopaSConfig::new().with_gamma(0.0).init(&LABELS).is_err());
    assert!(
        SotaSConfig::new()
            .with_lambda(f64::NAN)
            .init(&LABELS)
            .is_err()
    );
    assert!(AucMConfig::new().with_lr(-1.0).init(&LABELS).is_err());
    assert!(MiniBatchPaucConfig::new(0.5, 0.2).init(&LABELS).is_err());
    let e = SopaConfig::new(0.5).init(&[1.0, 1.0]).unwrap_err();
    assert!(e.to_string().contains("both classes"), "{e}");
    // Burn's 0/1 targets work as labels too.
    let zero_one: Vec<f64> = LABELS.iter().map(|&y| f64::from(y > 0.0)).collect();
    assert_eq!(
        SopaConfig::new(0.5).init(&zero_one).unwrap(),
        SopaConfig::new(0.5).init(&LABELS).unwrap()
    );
}

#[test]
fn the_agd_sbcd_state_round_trips_through_its_record() {
    let labels: Vec<f64> = (0..40)
        .map(|i| if i % 3 == 0 { 1.0 } else { 0.0 })
        .collect();
    let cfg = AgdSbcdConfig::new(0.05, 0.5)
        .with_i(4)
        .with_j(4)
        .with_seed(2);
    let mut sbcd = cfg.init(&labels).unwrap();
    // The name before 0.2.0 still builds the same objective (deprecated, naming the new one).
    #[allow(deprecated)]
    let old = rankrisk::train::deep_sbcd::DeepSbcdConfig::new(0.05, 0.5)
        .with_i(4)
        .with_j(4)
        .with_seed(2);
    assert_eq!(old.init(&labels).unwrap().state(), sbcd.state());
    let scores: Vec<f64> = (0..40).map(|i| (i as f64 * 0.71).cos()).collect();
    sbcd.init_duals(&scores).unwrap();
    let record =
        ModuleRecord::from_bytes(sbcd.clone().into_record().into_bytes().unwrap()).unwrap();
    let loaded = cfg.init(&labels).unwrap().try_load_record(record).unwrap();
    assert_eq!(loaded.state(), sbcd.state());
    assert!(sbcd.state().duals_m.lambda.iter().any(|&l| l != 0.0));
    // Its read-only value is the FPR-range objective that mini-batch pAUC computes with the
    // same range and pair loss (the duals take no part), and no state moves.
    let before = sbcd.state().clone();
    let mb = MiniBatchPaucConfig::new(0.05, 0.5)
        .with_loss(cfg.loss)
        .init(&labels)
        .unwrap();
    let value = sbcd.evaluate(&scores, &labels).unwrap();
    assert_eq!(value, mb.evaluate(&scores, &labels).unwrap());
    assert_eq!(sbcd.state(), &before);
    // SOPA's record, or one of another training set, does not load.
    let sopa = SopaConfig::new(0.5).init(&LABELS).unwrap();
    let e = cfg
        .init(&labels)
        .unwrap()
        .try_load_record(sopa.into_record())
        .unwrap_err();
    assert!(e.to_string().starts_with("AGD-SBCD's record:"), "{e}");
    let other: Vec<f64> = (0..40)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let e = cfg
        .init(&other)
        .unwrap()
        .try_load_record(sbcd.clone().into_record())
        .unwrap_err();
    assert!(e.to_string().contains("another training set"), "{e}");
}

/// STACO against LibAUC 2.0.1's `tpAUC_CVaR_loss` on the same batches
/// (`tests/data/staco_libauc.json`, written by `benches/peers/staco_fixture.py`): the score
/// gradients and the duals and thresholds after every step, for LibAUC's defaults and for
/// settings whose duals reach both ends of [0, 1]. LibAUC computes in float32.
#[test]
fn staco_follows_libauc_step_by_step() {
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("data/staco_libauc.json")).unwrap();
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    let floats = |v: &serde_json::Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let n = fixture["n"].as_u64().unwrap() as usize;
    let positive: Vec<usize> = floats(&fixture["positive"])
        .iter()
        .map(|&i| i as usize)
        .collect();
    let labels: Vec<f64> = (0..n)
        .map(|i| if positive.contains(&i) { 1.0 } else { -1.0 })
        .collect();
    let close = |got: f64, want: f64, what: &str| {
        assert!(
            (got - want).abs() <= 2e-6 + 1e-5 * want.abs(),
            "{what}: ours {got}, LibAUC's {want}"
        );
    };
    for (c, case) in fixture["cases"].as_array().unwrap().iter().enumerate() {
        let s = &case["settings"];
        let mut staco = StacoConfig::new()
            .with_margin(f(&s["threshold"]))
            .with_alpha(f(&s["alpha"]))
            .with_beta_0(f(&s["beta_0"]))
            .with_beta_1(f(&s["beta_1"]))
            .with_theta_0(f(&s["theta_0"]))
            .with_theta_1(f(&s["theta_1"]))
            .init(&labels)
            .unwrap();
        let steps = case["steps"].as_array().unwrap();
        assert!(steps.len() >= 5, "case {c}: {} steps", steps.len());
        for (k, step) in steps.iter().enumerate() {
            let ids: Vec<usize> = floats(&step["ids"]).iter().map(|&i| i as usize).collect();
            let logits = floats(&step["logits"]);
            let y: Vec<f64> = floats(&step["labels"])
                .iter()
                .map(|&l| if l > 0.5 { 1.0 } else { -1.0 })
                .collect();
            let g = staco.batch_gradient(&logits, &y, &ids).unwrap();
            for (i, (&s, &want)) in logits.iter().zip(&floats(&step["grad_scores"])).enumerate() {
                let h = 1.0 / (1.0 + (-s).exp());
                let what = format!("case {c}, step {k}, score {i}");
                close(f64::from(g.grad[i]), want * h * (1.0 - h), &what);
            }
            for (i, (&got, &want)) in staco.duals.iter().zip(&floats(&step["duals"])).enumerate() {
                close(got, want, &format!("case {c}, step {k}, dual {i}"));
            }
            let thresholds = floats(&step["thresholds"]);
            for (i, (&got, &want)) in staco.thresholds.iter().zip(&thresholds).enumerate() {
                close(got, want, &format!("case {c}, step {k}, threshold {i}"));
            }
            let what = format!("case {c}, step {k}, global threshold");
            close(staco.global, f(&step["global_threshold"]), &what);
        }
    }
}

/// The custom loop GUIDE shows, on a model with batch norm: ResNet-20 trained by SOTA-s with
/// Adam, saved mid-run by `train::checkpoint::save` (model, optimizer, the objective's record,
/// the loop's step) and reloaded into a fresh process's objects, continues bit for bit: its
/// losses and its evaluation scores (which read the batch norms' running statistics) equal an
/// uninterrupted run's, and the save itself changes nothing in the run that goes on.
#[test]
fn a_resnet_custom_loop_saved_mid_run_continues_bit_for_bit() {
    use burn::module::Module;
    use burn::optim::{AdamConfig, ModuleOptimizer};
    use rankrisk::train::SotaS;
    use rankrisk::train::checkpoint;
    use rankrisk_models::{ResNet20, ResNet20Config, Scorer};

    let device = device();
    // 32 images 1x12x12, the positives (every third) brighter.
    let n = 32;
    let labels: Vec<f64> = (0..n)
        .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
        .collect();
    let pixels: Vec<f32> = (0..n * 144)
        .map(|k| {
            let (i, p) = (k / 144, k % 144);
            let noise = ((i * 131 + p * 29) % 17) as f32 / 17.0;
            noise + if labels[i] > 0.0 { 0.4 } else { 0.0 }
        })
        .collect();
    let images = |ids: &[usize]| {
        let data: Vec<f32> = ids
            .iter()
            .flat_map(|&i| pixels[i * 144..(i + 1) * 144].iter().copied())
            .collect();
        Tensor::<4>::from_data(TensorData::new(data, [ids.len(), 1, 12, 12]), &device)
    };
    let ints = |v: Vec<i64>| {
        let len = v.len();
        Tensor::<1, Int>::from_data(TensorData::new(v, [len]), &device)
    };
    // Eight batches of 8, each with both classes.
    let batch_ids = |k: usize| -> Vec<usize> { (0..8).map(|j| (k * 5 + j * 4) % n).collect() };
    let step = |model: ResNet20,
                optim: &mut ModuleOptimizer,
                sota: &mut SotaS,
                k: usize|
     -> (ResNet20, f64) {
        let ids = batch_ids(k);
        let targets = ints(ids.iter().map(|&i| i64::from(labels[i] > 0.0)).collect());
        let loss = sota
            .forward(
                model.score(images(&ids)),
                targets,
                ints(ids.iter().map(|&i| i as i64).collect()),
            )
            .unwrap();
        let value = f64::from(loss.clone().into_scalar::<f32>());
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        (optim.step(1e-3, model, grads), value)
    };
    let all: Vec<usize> = (0..n).collect();
    let evaluate = |model: &ResNet20| -> Vec<f64> {
        scores_to_cpu(model.valid().score(images(&all))).unwrap()
    };
    let fresh = |seed: u64| {
        device.seed(seed);
        (
            ResNet20Config::new().with_in_channels(1).init(&device),
            AdamConfig::new().init(),
            SotaSConfig::new().init(&labels).unwrap(),
        )
    };

    // Uninterrupted: 8 steps.
    let (mut model, mut optim, mut sota) = fresh(7);
    let mut losses = Vec::new();
    for k in 0..8 {
        let (m, l) = step(model, &mut optim, &mut sota, k);
        model = m;
        losses.push(l);
    }
    let scores = evaluate(&model);

    // Saved after step 4, going on in the same process.
    let dir = std::env::temp_dir().join(format!("rankrisk-bn-continue-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (mut model, mut optim, mut sota) = fresh(7);
    for k in 0..4 {
        model = step(model, &mut optim, &mut sota, k).0;
    }
    checkpoint::save(
        &dir,
        &model,
        None,
        &optim,
        Some(sota.clone().into_record()),
        &4usize,
    )
    .unwrap();
    for k in 4..8 {
        model = step(model, &mut optim, &mut sota, k).0;
    }
    assert_eq!(evaluate(&model), scores, "the save changed the run");

    // Reloaded into another initialization, another optimizer and a fresh objective.
    let (model, optim, sota) = fresh(99);
    let loaded: checkpoint::Loaded<ResNet20, usize> = checkpoint::load(&dir, model, optim).unwrap();
    let (mut model, mut optim) = (loaded.model, loaded.optim);
    let mut sota = sota.try_load_record(loaded.objective.unwrap()).unwrap();
    let mut resumed = Vec::new();
    for k in loaded.state..8 {
        let (m, l) = step(model, &mut optim, &mut sota, k);
        model = m;
        resumed.push(l);
    }
    assert_eq!(resumed, losses[4..], "the training losses after the reload");
    assert_eq!(
        evaluate(&model),
        scores,
        "the evaluation scores after the reload"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `evaluate` against independent oracles, on a validation batch (no ids; labels 1 / 0) of
/// 4 positives and 6 negatives: it moves no state, and each objective's auxiliary variables
/// sit at their optimum for the batch.
#[test]
fn evaluate_is_read_only_and_at_the_batchs_optimum() {
    use rankrisk::math::loss::sigmoid;
    use rankrisk::pauc::objective::{PairLoss, objective_and_score_grad};

    let s = [0.3, -1.2, 2.0, 0.1, -0.4, 0.9, -2.5, 1.4, 0.2, -0.7];
    let classes = [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    let h: Vec<f64> = s.iter().map(|&v| sigmoid(v)).collect();
    let (hp, hn) = h.split_at(4);
    // The mean of the k largest.
    let top = |v: &[f64], k: usize| {
        let mut v = v.to_vec();
        v.sort_by(|a, b| b.total_cmp(a));
        v[..k].iter().sum::<f64>() / k as f64
    };
    let close = |a: f64, b: f64, what: &str| assert!((a - b).abs() < 1e-12, "{what}: {a} vs {b}");

    // SOPA: the one-way pAUC objective over FPR [0, beta] (the pAUC module's formula).
    let mut sopa = SopaConfig::new(0.5).init(&LABELS).unwrap();
    train(&mut sopa, 0, 3);
    let before = sopa.state();
    let (want, _, _) = objective_and_score_grad(hp, hn, PairLoss::SquaredHinge, 0.0, 0.5).unwrap();
    close(sopa.evaluate(&s, &classes).unwrap(), want, "SOPA");
    assert_eq!(sopa.state(), before, "SOPA's state moved");

    // STACO: each positive's mean loss over its theta_1 B- = 3 hardest negatives, averaged
    // over the theta_0 B+ = 2 positives where that mean is largest.
    let staco = StacoConfig::new().init(&LABELS).unwrap();
    let margin = StacoConfig::new().margin;
    let g_m: Vec<f64> = hp
        .iter()
        .map(|&a| {
            let row: Vec<f64> = hn
                .iter()
                .map(|&b| (margin - (a - b)).max(0.0).powi(2))
                .collect();
            top(&row, 3)
        })
        .collect();
    close(staco.evaluate(&s, &classes).unwrap(), top(&g_m, 2), "STACO");

    // SOPA-s, SOTA-s, PAUCI, ERM, MB: the loss their batch step reports (which does not
    // depend on their state), and no state moves.
    let ids: Vec<usize> = (0..10).collect();
    let signs: Vec<f64> = classes.iter().map(|&c| 2.0 * c - 1.0).collect();
    let ten = [1.0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0];
    let check = |name: &str, o: &mut dyn Objective| {
        let before = o.state();
        let value = o.evaluate(&s, &classes).unwrap();
        assert_eq!(o.state(), before, "{name}: the state moved");
        let stepped = o.batch_gradient(&s, &signs, &ids).unwrap().loss;
        close(value, stepped, name);
    };
    check("SOPA-s", &mut SopaSConfig::new().init(&ten).unwrap());
    check("SOTA-s", &mut SotaSConfig::new().init(&ten).unwrap());
    check(
        "PAUCI",
        &mut PauciConfig::new().with_alpha(0.5).init(&ten).unwrap(),
    );
    check("ERM", &mut ErmConfig::new().init(&ten).unwrap());
    check(
        "MB",
        &mut MiniBatchPaucConfig::new(0.0, 0.5).init(&ten).unwrap(),
    );

    // UPAUCI: the weights evaluate picks are each instance's maximizer: the step's loss at
    // them equals evaluate's, and moving any weight lowers it.
    for omega in [0.0, 0.1] {
        let mut u = UpauciConfig::new()
            .with_alpha(0.5)
            .with_omega(omega)
            .with_lr(0.0)
            .with_lr_weights(0.0)
            .init(&ten)
            .unwrap();
        let value = u.evaluate(&s, &classes).unwrap();
        let x = u.scalars;
        let g1 = 1.0 + x.gamma;
        let excess: Vec<f64> = h
            .iter()
            .zip(&ten)
            .map(|(&f, &y)| {
                if y > 0.0 {
                    (f - x.a).powi(2) - 2.0 * g1 * f - x.s_pos
                } else {
                    (f - x.b).powi(2) + 2.0 * g1 * f - x.s_neg
                }
            })
            .collect();
        let best: Vec<f64> = excess
            .iter()
            .map(|&e| {
                // The grid maximizer of c e - omega c^2 over [0, 1].
                (0..=1000)
                    .map(|i| i as f64 / 1000.0)
                    .max_by(|a, b| (a * e - omega * a * a).total_cmp(&(b * e - omega * b * b)))
                    .unwrap()
            })
            .collect();
        u.weights = best.clone();
        let at_best = u.clone().batch_gradient(&s, &ten, &ids).unwrap().loss;
        assert!(
            (value - at_best).abs() < 1e-6,
            "UPAUCI omega {omega}: {value} vs {at_best}"
        );
        for (k, &b) in best.iter().enumerate() {
            for delta in [0.3, -0.3] {
                let mut v = u.clone();
                v.weights[k] = (b + delta).clamp(0.0, 1.0);
                if v.weights[k] != b {
                    let moved = v.batch_gradient(&s, &ten, &ids).unwrap().loss;
                    assert!(moved <= value + 1e-12, "UPAUCI weight {k} moved by {delta}");
                }
            }
        }
    }

    // AUC-M: a brute-force min over a, b and max over alpha >= 0 of its batch loss.
    let aucm = AucMConfig::new()
        .with_imratio(Some(0.4))
        .init(&LABELS)
        .unwrap();
    let loss = |a: f64, b: f64, alpha: f64| {
        let (p, mut sq, mut mt) = (0.4, 0.0, 0.0);
        for (&f, &y) in h.iter().zip(&ten) {
            if y > 0.0 {
                sq += (1.0 - p) * (f - a).powi(2);
                mt -= (1.0 - p) * f;
            } else {
                sq += p * (f - b).powi(2);
                mt += p * f;
            }
        }
        let pp = p * (1.0 - p);
        sq / 10.0 + 2.0 * alpha * (pp * 1.0 + mt / 10.0) - pp * alpha * alpha
    };
    let grid = |n: usize, hi: f64| (0..=n).map(move |i| hi * i as f64 / n as f64);
    let brute = grid(100, 1.0)
        .flat_map(|a| grid(100, 1.0).map(move |b| (a, b)))
        .map(|(a, b)| {
            grid(400, 4.0)
                .map(|alpha| loss(a, b, alpha))
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .fold(f64::INFINITY, f64::min);
    let value = aucm.evaluate(&s, &classes).unwrap();
    // The grids' steps (0.01) bound the gap: a, b from above, alpha from below.
    assert!((value - brute).abs() < 1e-4, "AUC-M {value} vs {brute}");

    // The deep ADMM: CVaR at q = 0.5, the mean of the 5 largest logistic losses.
    let admm = DeepAdmmConfig::new(Weights::Cvar { q: 0.5 })
        .init(&ten)
        .unwrap();
    let losses: Vec<f64> = s
        .iter()
        .zip(&ten)
        .map(|(&v, &y)| (1.0 + (-y * v).exp()).ln())
        .collect();
    let value = admm.evaluate(&s, &classes).unwrap();
    close(value, top(&losses, 5), "deep ADMM");

    // A pairwise objective on one class, and a bad batch, are refused.
    assert!(matches!(
        sopa.evaluate(&s[..4], &classes[..4]),
        Err(TrainError::OneClassBatch { .. })
    ));
    assert!(sopa.evaluate(&s, &classes[..3]).is_err());
    assert!(sopa.evaluate(&[f64::NAN, 0.0], &[1.0, 0.0]).is_err());
}
