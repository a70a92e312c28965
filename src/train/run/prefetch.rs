//! Batches assembled one step ahead: while the device works on batch `k`, a worker thread
//! decodes and normalizes batch `k + 1` in host memory ([`ImageSource::host_batch`]). The ids
//! are drawn on the calling thread, in order, so the batches and their order are exactly those
//! of an unprefetched loop.

use rankrisk_datasets::batcher::HostBatch;
use rankrisk_datasets::{DataError, ImageSource};

/// Call `step` on the host batch of each id list `next_ids` yields, in order, assembling the
/// following batch on a worker thread meanwhile. Stops at the first `None` or error.
///
/// # Errors
/// The first [`DataError`] of an assembly (as `E`) or the first error of `step`.
pub(crate) fn for_each_batch<E: From<DataError>>(
    source: &dyn ImageSource,
    mut next_ids: impl FnMut() -> Option<Vec<usize>>,
    mut step: impl FnMut(HostBatch) -> Result<(), E>,
) -> Result<(), E> {
    std::thread::scope(|scope| {
        let assemble = |ids: Vec<usize>| scope.spawn(move || source.host_batch(&ids));
        let mut pending = next_ids().map(assemble);
        while let Some(handle) = pending.take() {
            let host = handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            pending = next_ids().map(assemble);
            step(host)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rankrisk_datasets::ImageSet;
    use rankrisk_datasets::batcher::ImageBatcher;

    use super::*;

    fn source(n: usize) -> ImageBatcher {
        let set = ImageSet {
            name: "t".into(),
            channels: 1,
            height: 2,
            width: 2,
            pixels: (0..n * 4).map(|i| i as u8).collect(),
            labels: (0..n).map(|i| (i % 2) as u16).collect(),
            source: (0..n).collect(),
            num_classes: 2,
        };
        ImageBatcher::new(Arc::new(set.binary(&[1]).unwrap()), &[0.0], &[1.0]).unwrap()
    }

    #[test]
    fn batches_arrive_in_order_and_equal_unprefetched_ones() {
        let src = source(10);
        let lists = [vec![3, 1], vec![0, 9, 4], vec![7]];
        let mut it = lists.iter().cloned();
        let mut seen = Vec::new();
        for_each_batch::<DataError>(
            &src,
            || it.next(),
            |h| {
                seen.push(h);
                Ok(())
            },
        )
        .unwrap();
        let want: Vec<HostBatch> = lists.iter().map(|l| src.host_batch(l).unwrap()).collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn an_assembly_error_stops_the_loop() {
        let src = source(4);
        let lists = [vec![0], vec![99], vec![1]];
        let mut it = lists.iter().cloned();
        let mut steps = 0;
        let err = for_each_batch::<DataError>(
            &src,
            || it.next(),
            |_| {
                steps += 1;
                Ok(())
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("99"), "{err}");
        assert_eq!(steps, 1);
    }
}
