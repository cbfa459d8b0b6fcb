public enum CofferRepairPlaceholder {}
