export function isPinAware(strategy) {
    const candidate = strategy;
    return typeof candidate.pinContext === 'function' && typeof candidate.withPins === 'function';
}
//# sourceMappingURL=pin-aware.js.map